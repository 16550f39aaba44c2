import pg from 'pg';
import { afterAll, describe } from 'vitest';
import { freshSchema, PG_URL } from '../test/store/support/pg.ts';
import { mcpSuite } from './mcp-suite.ts';

describe.skipIf(!PG_URL)('postgres', () => {
  const schemas: Array<Awaited<ReturnType<typeof freshSchema>>> = [];
  afterAll(async () => {
    for (const s of schemas) await s.drop();
  });
  mcpSuite('postgres', async () => {
    const db = await freshSchema();
    schemas.push(db);
    return {
      store: { kind: 'postgres', url: db.url },
      records: async () => {
        const c = new pg.Client({ connectionString: db.url });
        await c.connect();
        try {
          return Number((await c.query<{ n: string }>('SELECT count(*) AS n FROM records')).rows[0]!.n);
        } finally {
          await c.end();
        }
      },
    };
  });
});
