/**
 * A write lock another connection holds (another worker or gateway on the
 * file, here a second connection in this thread) is waited for on a timer,
 * not inside SQLite's busy handler (src/store/sqlite/group-commit.ts): the
 * event loop serves on meanwhile, programs submitted while it waits commit in
 * the same transaction once the lock is free, and the wait still ends in
 * storage_error (SQLITE_BUSY) when the busy timeout has passed.
 *
 * Had the batch slept in the busy handler, the lock holder here — on this
 * same thread — could never release it: the writes would fail at the busy
 * timeout, before any callback of this test ran again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { randomIds } from '../../src/records/ids.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { freshSpace, publishAgent } from './support/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-lock-wait-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A store on a fresh file, and a second connection to it holding the write lock. */
function locked(busyTimeoutMs: number) {
  const file = join(dir, `${randomIds.next('db')}.db`);
  const store = SqliteStore.open(file, { create: true, busyTimeoutMs });
  const other = new Database(file);
  other.pragma('busy_timeout = 0');
  other.exec('BEGIN IMMEDIATE');
  return { store, other };
}

/**
 * Another thread's connection to `file` that begins `begin` (after a read, with `read`) and ends it `ms`
 * later, whatever this thread is doing: it can end while this thread waits inside SQLite. Resolves once it holds
 * the lock; `released` once it let go.
 */
async function heldElsewhere(file: string, begin: 'BEGIN' | 'BEGIN IMMEDIATE', ms: number, read = false) {
  const worker = new Worker(
    `const { parentPort, workerData: w } = require('node:worker_threads');
     const db = new (require('better-sqlite3'))(w.file);
     db.exec(w.begin);
     if (w.read) db.prepare('SELECT count(*) FROM records').get();
     parentPort.postMessage('held');
     setTimeout(() => { db.exec('COMMIT'); db.close(); parentPort.postMessage('released'); }, w.ms);`,
    { eval: true, workerData: { file, begin, ms, read } },
  );
  await once(worker, 'message');
  const released = once(worker, 'message').then(() => worker.terminate());
  return { released };
}

/** How many of `writes` have settled, counted as they do. */
function settledCount(writes: Promise<unknown>[]): () => number {
  let n = 0;
  for (const w of writes) w.then(() => n++, () => n++);
  return () => n;
}

/** One full turn of the event loop after the batch's first try (it runs on setImmediate too). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

describe('sqlite group commit: a write lock another connection holds', () => {
  it('is waited for on a timer while the event loop serves on; what was submitted meanwhile commits in one transaction', async () => {
    // A busy timeout no turn of the event loop comes near, so only a batch blocking the loop can settle the writes early.
    const { store, other } = locked(3_000);
    const before = { ...store.writeStats };
    const first = publishAgent(store, freshSpace());
    const settled = settledCount([first]);
    await nextTurn();
    expect(settled()).toBe(0);
    const later = [publishAgent(store, freshSpace()), publishAgent(store, freshSpace())];
    await nextTurn();
    expect(settled()).toBe(0);
    expect(store.writeStats.transactions).toBe(before.transactions);
    // Reads go on meanwhile, although the connection's busy_timeout is 0 (a WAL reader never waits for a writer).
    expect(store.handle.pragma('busy_timeout', { simple: true })).toBe(0n);
    expect(await store.getRecord('dlg_absent')).toBeUndefined();
    expect(await store.push.configs('att_absent')).toEqual([]);
    other.exec('COMMIT');
    await Promise.all([first, ...later]);
    expect(store.writeStats.transactions - before.transactions).toBe(1);
    expect(store.writeStats.programs - before.programs).toBe(3);
    other.close();
    await store.close();
  });

  it('ends in storage_error (SQLITE_BUSY) once the busy timeout has passed, and the next write goes through', async () => {
    const { store, other } = locked(40);
    const write = publishAgent(store, freshSpace());
    const err = await expectCodeAsync(write, 'storage_error');
    expect(err.details).toMatchObject({ reason: 'SQLITE_BUSY' });
    other.exec('COMMIT');
    await publishAgent(store, freshSpace());
    other.close();
    await store.close();
  });

  it('closing waits for it inside SQLite for as long as the busy timeout: a lock let go meanwhile lets the queued write commit', async () => {
    const file = join(dir, `${randomIds.next('db')}.db`);
    const store = SqliteStore.open(file, { create: true, busyTimeoutMs: 10_000 });
    const other = await heldElsewhere(file, 'BEGIN IMMEDIATE', 150);
    const write = publishAgent(store, freshSpace());
    await nextTurn();
    // The connection's own busy_timeout is 0 (group-commit.ts): closing sets the configured one back for its wait.
    await store.close();
    await write; // committed and synced by the close, not refused with SQLITE_BUSY
    await other.released;
  });

  it('a retention reclaim waits (at most 1 s) for another connection\'s read to end, then truncates the WAL', async () => {
    const file = join(dir, `${randomIds.next('db')}.db`);
    const store = SqliteStore.open(file, { create: true });
    await publishAgent(store, freshSpace());
    const reader = await heldElsewhere(file, 'BEGIN', 150, true);
    // wal_checkpoint(TRUNCATE) waits in SQLite's busy handler for readers of the WAL; with the connection's own 0 it would give up at once.
    expect(await store.content.reclaim()).toBe(true);
    await reader.released;
    await store.close();
  });

  it('closing waits for it inside SQLite (close is synchronous) and fails what could not commit', async () => {
    const { store, other } = locked(40);
    const write = publishAgent(store, freshSpace());
    await nextTurn();
    await store.close();
    const err = await expectCodeAsync(write, 'storage_error');
    expect(err.details).toMatchObject({ reason: 'SQLITE_BUSY' });
    other.exec('ROLLBACK');
    other.close();
  });
});
