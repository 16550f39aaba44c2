import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect } from 'vitest';
import { LEDGER_LIMITS } from '../../src/ledger/types.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { storeContract } from './support/contract.ts';
import { taskContract } from './support/task-contract.ts';
import { gatesContract } from './support/gates-contract.ts';
import { rowContract } from './support/row-contract.ts';
import { watchOutsideWrites } from '../helpers/sqlite-writes.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-ledger-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
let last: SqliteStore | undefined;

storeContract('sqlite', async (limits) => SqliteStore.open(join(dir, `l${++n}.db`), { create: true, limits: { ...LEDGER_LIMITS, ...limits } }));
// The task contract drives the work queue too: each of its writes is a group-commit program, none commits alone.
const writes = watchOutsideWrites();
afterAll(() => writes.restore());
afterEach(() => expect(writes.outside.splice(0)).toEqual([]));
taskContract('sqlite', async (limits) => {
  const store = SqliteStore.open(join(dir, `t${++n}.db`), { create: true, limits: { ...LEDGER_LIMITS, ...limits } });
  writes.watch(store.handle);
  return store;
});
gatesContract('sqlite', async () => SqliteStore.open(join(dir, `g${++n}.db`), { create: true }));
rowContract('sqlite', async () => (last = await SqliteStore.open(join(dir, `r${++n}.db`), { create: true })), async (sql) => void last!.handle.exec(sql));
