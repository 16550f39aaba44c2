import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { pushContract } from './support/push-contract.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-push-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

pushContract('sqlite', async () => {
  const path = join(dir, `p${++n}.db`);
  // The twin is a second connection to the same file, as a second process would have.
  return { store: SqliteStore.open(path, { create: true }), twin: async () => SqliteStore.open(path) };
});
