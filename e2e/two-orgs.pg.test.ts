import { afterAll, describe } from 'vitest';
import { freshSchema, PG_URL } from '../test/store/support/pg.ts';
import { twoOrgSuite } from './two-orgs-suite.ts';

// Several Baton processes behind one PostgreSQL: both organisations' gateways share it.
describe.skipIf(!PG_URL)('postgres', () => {
  const schemas: Array<Awaited<ReturnType<typeof freshSchema>>> = [];
  afterAll(async () => {
    for (const s of schemas) await s.drop();
  });
  twoOrgSuite('postgres', async () => {
    const db = await freshSchema();
    schemas.push(db);
    return { pgUrl: db.url };
  });
});
