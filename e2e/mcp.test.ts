import { join } from 'node:path';
import Database from 'better-sqlite3';
import { mcpSuite } from './mcp-suite.ts';

mcpSuite('sqlite', async () => ({
  records: async (dataDir) => {
    const db = new Database(join(dataDir, 'baton.db'), { readonly: true });
    try {
      return (db.prepare('SELECT count(*) AS n FROM records').get() as { n: number }).n;
    } finally {
      db.close();
    }
  },
}));
