import { afterAll, beforeAll, describe } from 'vitest';
import { PgStore } from '../../src/store/postgres/store.ts';
import { processContract } from './support/process-contract.ts';
import { freshSchema, PG_URL } from './support/pg.ts';

describe.skipIf(!PG_URL)('postgres', () => {
  let db: Awaited<ReturnType<typeof freshSchema>>;
  beforeAll(async () => {
    db = await freshSchema();
    await (await PgStore.open(db.url)).close(); // migrate once up front
  });
  afterAll(async () => db?.drop());

  processContract('postgres', async () => ({ kind: 'pg', where: db.url, open: () => PgStore.open(db.url, { max: 4 }) }));
});
