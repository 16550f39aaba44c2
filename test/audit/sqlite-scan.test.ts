import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe } from 'vitest';
import { randomIds } from '../../src/records/ids.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { auditScanContract } from './support/scan-contract.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-audit-scan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('sqlite audit scans', () => {
  auditScanContract(async () => {
    const store = SqliteStore.open(join(dir, `${randomIds.next('db')}.db`), { create: true });
    const db = store.handle;
    return {
      store,
      exec: async (sql) => void db.exec(sql),
      unlock: async () => void db.exec(['records_immutable_u', 'records_immutable_d', 'control_immutable_u', 'control_immutable_d'].map((t) => `DROP TRIGGER ${t};`).join('\n')),
      rows: async <T>(sql: string) => db.prepare(sql).all() as T[],
      close: () => store.close(),
    };
  });
});
