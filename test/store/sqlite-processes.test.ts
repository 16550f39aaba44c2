import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { processContract } from './support/process-contract.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-proc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

processContract('sqlite', async () => {
  const where = join(dir, `p${++n}.db`);
  SqliteStore.open(where, { create: true }).handle.close();
  return { kind: 'sqlite', where, open: async () => SqliteStore.open(where) };
});
