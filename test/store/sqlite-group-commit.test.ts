/**
 * Group commit (src/store/sqlite/group-commit.ts): concurrent writes share one
 * BEGIN IMMEDIATE … COMMIT, a refused program rolls back only itself, and no
 * caller is answered before the shared COMMIT succeeded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { BatonError } from '../../src/errors.ts';
import { randomIds } from '../../src/records/ids.ts';
import { GroupCommit } from '../../src/store/sqlite/group-commit.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { watchOutsideWrites } from '../helpers/sqlite-writes.ts';
import { admission, chain, freshSpace, publishAgent } from './support/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-group-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fresh = () => SqliteStore.open(join(dir, `${randomIds.next('db')}.db`), { create: true });

/** Three concurrent admissions' requests on a fresh depth-3 chain capped at `cap` units. */
async function setup(store: SqliteStore, cap: bigint, n: number) {
  const space = freshSpace();
  await publishAgent(store, space);
  const c = await chain(store, space, { root: cap });
  const ids = [c.root, c.child, c.leaf];
  const requests = [];
  for (let i = 0; i < n; i++) requests.push(await admission(store, space, ids, c.leaf));
  return { c, requests };
}

const unitsOf = async (store: SqliteStore, root: string) => (await store.ledger.tree(root))?.balances.find((b) => b.dimension === 'units');

/**
 * A deferred foreign key is checked only at COMMIT: a TEMP trigger makes every
 * reservation insert add a dangling row, so the shared COMMIT itself fails.
 */
function failCommitsOnReservation(store: SqliteStore): void {
  store.handle.exec(`
    CREATE TEMP TABLE gc_parent (id INTEGER PRIMARY KEY);
    CREATE TEMP TABLE gc_child (p INTEGER REFERENCES gc_parent(id) DEFERRABLE INITIALLY DEFERRED);
    CREATE TEMP TRIGGER gc_dangle AFTER INSERT ON main.ledger_reservations BEGIN INSERT INTO gc_child VALUES (42); END;`);
}

describe('sqlite group commit: the store', () => {
  it('concurrent admissions in one process share one transaction and each is applied', async () => {
    const store = fresh();
    const { c, requests } = await setup(store, 100n, 20);
    const before = { ...store.writeStats };
    const results = await Promise.all(requests.map((r) => store.ledger.admit(r)));
    expect(results).toHaveLength(20);
    expect(store.writeStats.transactions - before.transactions).toBe(1);
    expect(store.writeStats.programs - before.programs).toBe(20);
    // Made durable by an fsync of the WAL after the COMMIT: the connection, taken over by the group commit, does not sync on COMMIT.
    expect(store.writeStats.syncs - before.syncs).toBeGreaterThanOrEqual(1);
    expect(store.handle.pragma('synchronous', { simple: true })).toBe(1n);
    expect(await unitsOf(store, c.root)).toMatchObject({ reserved: '20', consumed: '0' });
    for (const r of requests) expect((await store.ledger.reservation(r.reservation_id))?.status).toBe('held');
    await store.close();
  });

  it('every other write on the connection is a program too: identity claims, card history, content purges', async () => {
    const store = fresh();
    const writes = watchOutsideWrites();
    try {
      writes.watch(store.handle);
      const before = { ...store.writeStats };
      // Each resolves only after its transaction's COMMIT and the fsync after it.
      expect(await store.meta.claimIdentity('gw_a', () => '{"v":1}', '2030-01-01T00:00:00.000Z')).toBe('{"v":1}');
      expect(await store.meta.claimIdentity('gw_a', (stored) => `${stored}!`, '2030-01-01T00:00:01.000Z')).toBe('{"v":1}!');
      await store.meta.appendCard('https://agent.test', 'card_a', '{"card":1}', '2030-01-01T00:00:02.000Z');
      await store.content.purge('2030-01-01T00:00:00.000Z', 'ret_a', '2030-01-01T00:00:03.000Z');
      expect(writes.outside).toEqual([]);
      expect(store.writeStats.transactions - before.transactions).toBe(4);
      expect(store.writeStats.syncs - before.syncs).toBe(4);
      expect(await store.meta.lastCard('https://agent.test', 'card_a')).toBe('{"card":1}');
    } finally {
      writes.restore();
      await store.close();
    }
  });

  it('a transaction runs no PRAGMA: the connection stays NORMAL (the fsync is the group commit\'s) and busy_timeout 0 (locks wait on a timer)', async () => {
    const store = fresh();
    const { requests } = await setup(store, 100n, 3);
    const execs: string[] = [];
    const exec = store.handle.exec.bind(store.handle);
    store.handle.exec = (sql: string) => (execs.push(sql), exec(sql));
    try {
      for (const r of requests) await store.ledger.admit(r);
    } finally {
      store.handle.exec = exec;
    }
    // Each PRAGMA exec is compiled afresh (SQLite applies a pragma when it compiles it): none per transaction.
    expect(execs).toEqual([]);
    expect(store.handle.pragma('synchronous', { simple: true })).toBe(1n);
    expect(store.handle.pragma('busy_timeout', { simple: true })).toBe(0n);
    // The configured wait (10 s by default) is the group commit's, for a write lock another connection holds.
    expect(store['commits'].busyMs).toBe(10_000);
    await store.close();
  });

  it('a refused admission in a batch rolls back only itself: the others commit', async () => {
    const store = fresh();
    const { c, requests } = await setup(store, 2n, 3);
    const before = { ...store.writeStats };
    const settled = await Promise.allSettled(requests.map((r) => store.ledger.admit(r)));
    expect(store.writeStats.transactions - before.transactions).toBe(1);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect(((settled[2] as PromiseRejectedResult).reason as BatonError).code).toBe('limit_exceeded');
    expect(await unitsOf(store, c.root)).toMatchObject({ reserved: '2' });
    expect(await store.ledger.reservation(requests[2]!.reservation_id)).toBeUndefined();
    await store.close();
  });

  it('a failed COMMIT rejects every admission of the batch with storage_error and keeps none of them', async () => {
    const store = fresh();
    const { c, requests } = await setup(store, 100n, 5);
    failCommitsOnReservation(store);
    const before = { ...store.writeStats };
    const settled = await Promise.allSettled(requests.map((r) => store.ledger.admit(r)));
    expect(settled.map((s) => s.status)).toEqual(Array(5).fill('rejected'));
    for (const s of settled) expect(((s as PromiseRejectedResult).reason as BatonError).code).toBe('storage_error');
    expect(store.writeStats.failedTransactions - before.failedTransactions).toBe(1);
    expect(store.writeStats.transactions).toBe(before.transactions);
    store.handle.exec('DROP TRIGGER temp.gc_dangle');
    expect(await unitsOf(store, c.root)).toMatchObject({ reserved: '0' });
    for (const r of requests) expect(await store.ledger.reservation(r.reservation_id)).toBeUndefined();
    // The connection is usable afterwards: the same admissions now commit.
    await Promise.all(requests.map((r) => store.ledger.admit(r)));
    expect(await unitsOf(store, c.root)).toMatchObject({ reserved: '5' });
    await store.close();
  });

  it('queued writes are committed before close', async () => {
    const path = join(dir, `${randomIds.next('db')}.db`);
    const store = SqliteStore.open(path, { create: true });
    const { c, requests } = await setup(store, 100n, 3);
    const pending = requests.map((r) => store.ledger.admit(r));
    await store.close();
    await Promise.all(pending);
    const again = SqliteStore.open(path);
    expect(await unitsOf(again, c.root)).toMatchObject({ reserved: '3' });
    await again.close();
  });
});

describe('sqlite group commit: the batcher', () => {
  const table = () => {
    const db = new Database(join(dir, `${randomIds.next('raw')}.db`));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL'); // as the store opens it (better-sqlite3 defaults to NORMAL in WAL mode)
    db.exec('CREATE TABLE t (v TEXT NOT NULL) STRICT');
    return db;
  };
  const rows = (db: Database.Database) => (db.prepare('SELECT v FROM t ORDER BY rowid').all() as Array<{ v: string }>).map((r) => r.v);

  it('a program that wrote and then threw loses its own writes only, in submission order', async () => {
    const db = table();
    const gc = new GroupCommit(db, (e) => e);
    const write = (v: string, fail = false) => () => {
      db.prepare('INSERT INTO t VALUES (?)').run(v);
      if (fail) throw new Error(`refused ${v}`);
      return rows(db);
    };
    const settled = await Promise.allSettled([gc.submit(write('a')), gc.submit(write('b', true)), gc.submit(write('c'))]);
    expect(settled[0]).toEqual({ status: 'fulfilled', value: ['a'] });
    expect((settled[1] as PromiseRejectedResult).reason).toMatchObject({ message: 'refused b' });
    expect(settled[2]).toEqual({ status: 'fulfilled', value: ['a', 'c'] });
    expect(rows(db)).toEqual(['a', 'c']);
    expect(gc.stats).toEqual({ transactions: 1, programs: 3, failedTransactions: 0, syncs: 1 });
    db.close();
  });

  it('a lone program runs in the transaction itself: no savepoint, and its refusal keeps none of its writes', async () => {
    const db = table();
    // Every bookend the batcher runs, in order (it prepares them once, here).
    const ran: string[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((text: string) => {
      const stmt = prepare(text);
      const run = stmt.run.bind(stmt);
      stmt.run = ((...args: unknown[]) => (ran.push(text), run(...(args as [])))) as typeof stmt.run;
      return stmt;
    }) as typeof db.prepare;
    const gc = new GroupCommit(db, (e) => e);
    const refused = gc.submit(() => {
      prepare("INSERT INTO t VALUES ('a')").run();
      throw new Error('refused a');
    });
    await expect(refused).rejects.toThrow('refused a');
    expect(await gc.submit(() => (prepare("INSERT INTO t VALUES ('b')").run(), rows(db)))).toEqual(['b']);
    expect(rows(db)).toEqual(['b']);
    expect(ran).toEqual(['BEGIN IMMEDIATE', 'ROLLBACK', 'BEGIN IMMEDIATE', 'COMMIT']);
    expect(db.inTransaction).toBe(false);
    expect(gc.stats).toMatchObject({ transactions: 2, programs: 2, failedTransactions: 0 });
    db.close();
  });

  it('answers nobody before COMMIT: a failing COMMIT rejects the whole batch, refusals included', async () => {
    const db = table();
    db.exec('CREATE TABLE p (id INTEGER PRIMARY KEY); CREATE TABLE ch (p INTEGER REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED)');
    db.pragma('foreign_keys = ON');
    const gc = new GroupCommit(db, (e) => e);
    const ok = gc.submit(() => db.prepare("INSERT INTO t VALUES ('a')").run());
    const refused = gc.submit(() => {
      throw new Error('refused');
    });
    const dangling = gc.submit(() => db.prepare('INSERT INTO ch VALUES (7)').run());
    const settled = await Promise.allSettled([ok, refused, dangling]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const s of settled) expect((s as PromiseRejectedResult).reason).toMatchObject({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' });
    expect(rows(db)).toEqual([]);
    expect(db.inTransaction).toBe(false);
    expect(gc.stats).toEqual({ transactions: 0, programs: 0, failedTransactions: 1, syncs: 0 });
    db.close();
  });

  /** A WAL sync the test completes by hand: `calls` holds each call's callback, `called` resolves on the next call. */
  const manualSync = () => {
    const calls: Array<(err: Error | null) => void> = [];
    let wake: () => void = () => undefined;
    const next = () => new Promise<void>((r) => (wake = r));
    let called = next();
    return {
      calls,
      get called() {
        return called;
      },
      walSync: {
        sync: (done: (err: Error | null) => void) => {
          calls.push(done);
          const w = wake;
          called = next();
          w();
        },
        syncNow: () => undefined,
        close: () => undefined,
      },
    };
  };
  const settledYet = (p: Promise<unknown>) => {
    const state = { settled: false };
    p.then(() => (state.settled = true), () => (state.settled = true));
    return state;
  };
  /** Two turns of the event loop: time for a queued batch to run and ask for its fsync. */
  const turns = async () => {
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
  };
  /** A batcher whose first batch (one row, 'a') has committed and waits for its fsync. */
  const firstCommitted = async () => {
    const db = table();
    const m = manualSync();
    const gc = new GroupCommit(db, (e) => e, { sync: m.walSync });
    const firstCalled = m.called;
    const a = gc.submit(() => db.prepare("INSERT INTO t VALUES ('a')").run());
    const aState = settledYet(a);
    await firstCalled;
    /** Ends the first fsync; resolves once the batches committed meanwhile asked for theirs. */
    const syncFirst = async () => {
      const secondCalled = m.called;
      m.calls[0]!(null);
      await a;
      await secondCalled;
    };
    return { db, m, gc, aState, syncFirst };
  };

  it('a lone refusal is answered only after the fsync, like a commit: it may rest on an unsynced batch', async () => {
    const { db, m, gc, syncFirst } = await firstCommitted();
    // 'a' is committed, not yet durable; the refusal reads it.
    const refused = gc.submit(() => {
      if (rows(db).includes('a')) throw new Error('refused: a is there');
    });
    const state = settledYet(refused);
    await turns();
    expect(state.settled).toBe(false);
    await syncFirst();
    expect(state.settled).toBe(false);
    m.calls[1]!(null);
    await expect(refused).rejects.toThrow('refused: a is there');
    db.close();
  });

  it('answers a batch only once the WAL holding its COMMIT is fsynced; batches committed meanwhile share the next fsync', async () => {
    const { db, m, gc, aState, syncFirst } = await firstCommitted();
    // Committed — the row is there for reads — but not synced: nobody is answered, and the COMMIT did not sync inline.
    expect(rows(db)).toEqual(['a']);
    expect(db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL since the group commit took the connection over
    const b = gc.submit(() => db.prepare("INSERT INTO t VALUES ('b')").run());
    const bState = settledYet(b);
    await turns();
    expect(rows(db)).toEqual(['a', 'b']);
    expect(m.calls).toHaveLength(1); // b's batch waits for the fsync under way to end
    expect([aState.settled, bState.settled]).toEqual([false, false]);
    await syncFirst();
    expect(bState.settled).toBe(false);
    m.calls[1]!(null);
    await b;
    expect(gc.stats).toEqual({ transactions: 2, programs: 2, failedTransactions: 0, syncs: 2 });
    db.close();
  });

  it('a failed fsync rejects its batch with storage_error (sync_failed), and every later write without running it', async () => {
    const db = table();
    const m = manualSync();
    const gc = new GroupCommit(db, (e) => e, { sync: m.walSync });
    const called = m.called;
    const a = gc.submit(() => db.prepare("INSERT INTO t VALUES ('a')").run());
    await called;
    m.calls[0]!(new Error('EIO: i/o error, fsync'));
    const err = (await a.then(() => undefined, (e: unknown) => e)) as BatonError;
    expect([err.code, err.details]).toStrictEqual(['storage_error', { reason: 'sync_failed' }]);
    let ran = false;
    const later = gc.submit(() => (ran = true));
    expect(((await later.then(() => undefined, (e: unknown) => e)) as BatonError).code).toBe('storage_error');
    expect(ran).toBe(false);
    db.close();
  });

  it('without synchronous FULL in WAL mode the COMMIT is the answer: no fsync is added', async () => {
    const db = table();
    db.pragma('synchronous = NORMAL');
    const m = manualSync();
    const gc = new GroupCommit(db, (e) => e, { sync: m.walSync });
    await gc.submit(() => db.prepare("INSERT INTO t VALUES ('a')").run());
    expect(m.calls).toHaveLength(0);
    expect(gc.stats.syncs).toBe(0);
    db.close();
  });

  it('splits a long queue into bounded batches', async () => {
    const db = table();
    const gc = new GroupCommit(db, (e) => e, { maxBatch: 4 });
    await Promise.all(Array.from({ length: 10 }, (_, i) => gc.submit(() => db.prepare('INSERT INTO t VALUES (?)').run(String(i)))));
    expect(gc.stats).toMatchObject({ transactions: 3, programs: 10, failedTransactions: 0 });
    expect(rows(db)).toHaveLength(10);
    db.close();
  });
});

it('a refusal still reaches its caller as the program threw it', async () => {
  const store = fresh();
  const { requests } = await setup(store, 1n, 2);
  await store.ledger.admit(requests[0]!);
  await expectCodeAsync(store.ledger.admit(requests[1]!), 'limit_exceeded');
  await store.close();
});
