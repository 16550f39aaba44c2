import { afterAll, describe } from 'vitest';
import { PgStore } from '../../src/store/postgres/store.ts';
import { pushContract } from './support/push-contract.ts';
import { freshSchema, PG_URL } from './support/pg.ts';

describe.skipIf(!PG_URL)('postgres push store', () => {
  // A schema per test: claims take whatever is due, so tests must not see each other's rows.
  const schemas: Array<Awaited<ReturnType<typeof freshSchema>>> = [];
  afterAll(async () => {
    for (const s of schemas) await s.drop();
  });

  pushContract('postgres', async () => {
    const db = await freshSchema();
    schemas.push(db);
    return { store: await PgStore.open(db.url, { max: 4 }), twin: () => PgStore.open(db.url, { max: 4 }) };
  });
});
