import pg from 'pg';
import { afterAll, describe } from 'vitest';
import { PgStore } from '../src/store/postgres/store.ts';
import { freshSchema, PG_URL } from '../test/store/support/pg.ts';
import { retentionSuite } from './retention-suite.ts';

describe.skipIf(!PG_URL)('postgres', () => {
  const schemas: Array<Awaited<ReturnType<typeof freshSchema>>> = [];
  afterAll(async () => {
    for (const s of schemas) await s.drop();
  });
  retentionSuite('postgres', async () => {
    const db = await freshSchema();
    schemas.push(db);
    return {
      store: { kind: 'postgres', url: db.url },
      open: () => PgStore.open(db.url, { max: 2 }),
      exec: async (_w, sql, params) => {
        const c = new pg.Client({ connectionString: db.url });
        await c.connect();
        try {
          let n = 0;
          await c.query(sql.replace(/\?/g, () => `$${++n}`), params);
        } finally {
          await c.end();
        }
      },
    };
  });
});
