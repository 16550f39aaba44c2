/** A throw-away PostgreSQL schema per test file, on the server CI provides. */
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { randomIds } from '../../../src/records/ids.ts';

export const PG_URL = process.env.BATON_TEST_PG;

/** Creates a schema on `base` (default BATON_TEST_PG) and returns a URL whose search_path is it. */
export async function freshSchema(base: string | undefined = PG_URL): Promise<{ url: string; drop(): Promise<void> }> {
  if (!base) throw new Error('BATON_TEST_PG is not set');
  const schema = randomIds.next('bt').replace(/[^a-z0-9_]/g, '');
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const url = `${base}${base.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  return {
    url,
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    },
  };
}

/**
 * For the tests of one describe block: a fresh schema and a client connected
 * to it, made before its tests (then `setup` runs on that client) and
 * dropped after them. Read its fields inside the tests.
 */
export function schemaWithAdmin(setup?: (admin: pg.Client) => Promise<void>): { db: Awaited<ReturnType<typeof freshSchema>>; admin: pg.Client } {
  const ctx = {} as { db: Awaited<ReturnType<typeof freshSchema>>; admin: pg.Client };
  beforeAll(async () => {
    ctx.db = await freshSchema();
    ctx.admin = new pg.Client({ connectionString: ctx.db.url });
    await ctx.admin.connect();
    await setup?.(ctx.admin);
  });
  afterAll(async () => {
    await ctx.admin?.end();
    await ctx.db?.drop();
  });
  return ctx;
}
