import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { treePageSuite, treeQuerySuite } from './tree-page-suite.ts';

treePageSuite('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-tree-page-'));
  const store = SqliteStore.open(join(dir, 'b.db'), { create: true });
  return { store, close: async () => (await store.close(), rmSync(dir, { recursive: true, force: true })) };
});
treeQuerySuite();
