import { afterAll, describe } from 'vitest';
import { PgStore } from '../src/store/postgres/store.ts';
import { freshSchema, PG_URL } from '../test/store/support/pg.ts';
import { requestPathSuite } from './request-path-suite.ts';

// Two gateway processes on one PostgreSQL database.
describe.skipIf(!PG_URL)('postgres', () => {
  const schemas: Array<Awaited<ReturnType<typeof freshSchema>>> = [];
  afterAll(async () => {
    for (const s of schemas) await s.drop();
  });
  requestPathSuite('postgres', async () => {
    const db = await freshSchema();
    schemas.push(db);
    return { store: { kind: 'postgres', url: db.url }, open: () => PgStore.open(db.url, { max: 2 }) };
  });
});
