import { afterAll, describe } from 'vitest';
import { freshSchema, PG_URL } from '../test/store/support/pg.ts';
import { mcpFederationSuite } from './mcp-federation-suite.ts';

// Mixed stores: organisation A on SQLite, organisation B (which fronts the MCP server) on its own PostgreSQL schema.
describe.skipIf(!PG_URL)('postgres', () => {
  const schemas: Array<Awaited<ReturnType<typeof freshSchema>>> = [];
  afterAll(async () => {
    for (const s of schemas) await s.drop();
  });
  mcpFederationSuite('sqlite A + postgres B', async () => {
    const db = await freshSchema();
    schemas.push(db);
    return { pgUrls: { 1: db.url } };
  });
});
