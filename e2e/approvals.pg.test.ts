import { afterAll, describe } from 'vitest';
import { freshSchema, PG_URL } from '../test/store/support/pg.ts';
import { approvalsSuite } from './approvals-suite.ts';

// The gateway process, the second node and the CLI on one PostgreSQL schema: the once-only use of an approval rests on its row lock there.
describe.skipIf(!PG_URL)('postgres', () => {
  const schemas: Array<Awaited<ReturnType<typeof freshSchema>>> = [];
  afterAll(async () => {
    for (const s of schemas) await s.drop();
  });
  approvalsSuite('postgres', async () => {
    const db = await freshSchema();
    schemas.push(db);
    return { kind: 'postgres', url: db.url };
  });
});
