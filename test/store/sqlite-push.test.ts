import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { watchOutsideWrites } from '../helpers/sqlite-writes.ts';
import { pushContract } from './support/push-contract.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-push-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
// Every push write is a program of the store's group commit, answered once its WAL is synced: none commits alone.
const writes = watchOutsideWrites();
afterAll(() => writes.restore());
afterEach(() => expect(writes.outside.splice(0)).toEqual([]));
const watched = (store: SqliteStore) => (writes.watch(store.handle), store);

pushContract('sqlite', async () => {
  const path = join(dir, `p${++n}.db`);
  // The twin is a second connection to the same file, as a second process would have.
  return { store: watched(SqliteStore.open(path, { create: true })), twin: async () => watched(SqliteStore.open(path)) };
});
