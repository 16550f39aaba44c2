import pg from 'pg';
import { describe } from 'vitest';
import { PgStore } from '../../src/store/postgres/store.ts';
import { freshSchema, PG_URL } from '../store/support/pg.ts';
import { auditScanContract } from './support/scan-contract.ts';

describe.skipIf(!PG_URL)('postgres audit scans', () => {
  // A schema per test: the audit scans everything, and tests tamper.
  auditScanContract(async () => {
    const schema = await freshSchema();
    const store = await PgStore.open(schema.url, { max: 2 });
    const raw = new pg.Client({ connectionString: schema.url });
    await raw.connect();
    return {
      store,
      exec: async (sql) => void (await raw.query(sql)),
      unlock: async () => void (await raw.query('DROP TRIGGER records_immutable ON records; DROP TRIGGER control_immutable ON control_events')),
      rows: async <T>(sql: string) => (await raw.query(sql)).rows as T[],
      close: async () => {
        await raw.end();
        await store.close();
        await schema.drop();
      },
    };
  });
});
