/** A throw-away PostgreSQL schema per test file, on the server CI provides. */
import pg from 'pg';
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
