import { afterAll, describe } from 'vitest';
import { freshSchema, PG_URL } from '../test/store/support/pg.ts';
import { federationSuite } from './federation-suite.ts';

// Mixed stores: organisation A on SQLite, organisation B on its own PostgreSQL schema.
describe.skipIf(!PG_URL)('postgres', () => {
  const schemas: Array<Awaited<ReturnType<typeof freshSchema>>> = [];
  afterAll(async () => {
    for (const s of schemas) await s.drop();
  });
  federationSuite('sqlite A + postgres B', async () => {
    const db = await freshSchema();
    schemas.push(db);
    return { pgUrls: { 1: db.url } };
  });
});
