import { afterAll, beforeAll, describe } from 'vitest';
import { LEDGER_LIMITS } from '../../src/ledger/types.ts';
import { PgStore } from '../../src/store/postgres/store.ts';
import { storeContract } from './support/contract.ts';
import { taskContract } from './support/task-contract.ts';
import { gatesContract } from './support/gates-contract.ts';
import { rowContract } from './support/row-contract.ts';
import pg from 'pg';
import { freshSchema, PG_URL } from './support/pg.ts';

describe.skipIf(!PG_URL)('postgres store', () => {
  let db: Awaited<ReturnType<typeof freshSchema>>;
  beforeAll(async () => {
    db = await freshSchema();
  });
  afterAll(async () => db?.drop());

  storeContract('postgres', async (limits) => PgStore.open(db.url, { limits: { ...LEDGER_LIMITS, ...limits }, max: 4 }));
  taskContract('postgres', async (limits) => PgStore.open(db.url, { limits: { ...LEDGER_LIMITS, ...limits }, max: 4 }));
  gatesContract('postgres', async () => PgStore.open(db.url, { max: 4 }));
  rowContract(
    'postgres',
    async () => PgStore.open(db.url, { max: 4 }),
    async (sql) => {
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        await client.query(sql);
      } finally {
        await client.end();
      }
    },
  );
});
