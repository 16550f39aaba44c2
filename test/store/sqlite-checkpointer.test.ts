/**
 * WAL checkpoints off the request thread (src/store/sqlite/checkpointer.ts):
 * the request connection's COMMIT no longer copies the WAL into the database
 * below the backstop; a worker thread does, after every `every` commits (or
 * more, while they leave the WAL short of its frame target),
 * without blocking the writer; a worker that cannot run is given up and the
 * connection goes back to SQLite's own checkpoints.
 */
import { mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { randomIds } from '../../src/records/ids.ts';
import { BACKSTOP_PAGES, MAX_CATCH_UPS, WalCheckpointer } from '../../src/store/sqlite/checkpointer.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { admission, chain, freshSpace, publishAgent } from './support/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-ckpt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A WAL file opened as the store opens it, with one table of page-sized rows. */
function table() {
  const path = join(dir, `${randomIds.next('raw')}.db`);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (v TEXT NOT NULL) STRICT');
  const insert = db.prepare('INSERT INTO t(v) VALUES (?)');
  /** One committed transaction of `pages` rows of one page each. */
  const commit = (pages = 4) => db.transaction(() => {
    for (let i = 0; i < pages; i++) insert.run('x'.repeat(4_000));
  })();
  return { db, path, commit, size: () => statSync(path).size };
}

describe('sqlite WAL checkpointer', () => {
  it('takes the automatic checkpoint out of COMMIT: past 1,000 WAL pages the database file is untouched until the worker runs', async () => {
    const t = table();
    const ck = new WalCheckpointer(t.db, 1_000_000);
    expect(t.db.pragma('wal_autocheckpoint', { simple: true })).toBe(BACKSTOP_PAGES);
    const before = t.size();
    for (let i = 0; i < 30; i++) {
      t.commit(50); // 1,500 pages in all: SQLite's default would have checkpointed inside a COMMIT
      ck.committed();
    }
    expect(t.size()).toBe(before);
    expect(ck.stats.checkpoints).toBe(0);
    await ck.close();
    t.db.close();
  });

  it('checkpoints on the worker after every `every` commits, copying the WAL into the database', async () => {
    const t = table();
    const ck = new WalCheckpointer(t.db, 3);
    const before = t.size();
    t.commit();
    ck.committed();
    t.commit();
    ck.committed();
    await ck.idle();
    expect(ck.stats.checkpoints).toBe(0);
    expect(t.size()).toBe(before);
    t.commit();
    ck.committed();
    await ck.idle();
    expect(ck.stats.checkpoints).toBe(1);
    expect(ck.stats.failed).toBeUndefined();
    expect(ck.stats.last!.checkpointed).toBe(ck.stats.last!.log);
    expect(ck.stats.last!.log).toBeGreaterThanOrEqual(12);
    expect(t.size()).toBeGreaterThan(before + 12 * 4_000);
    await ck.close();
    t.db.close();
  });

  it('stretches the interval while transactions leave the WAL short of its frame target, within bounds, and shrinks it back', async () => {
    const t = table();
    const ck = new WalCheckpointer(t.db, 2, 60);
    const commits = async (n: number, pages: number) => {
      for (let i = 0; i < n; i++) {
        t.commit(pages);
        ck.committed();
      }
      await ck.idle();
    };
    await commits(2, 2); // the minimum interval: a checkpoint finds ~2 × 3 frames
    expect(ck.stats.checkpoints).toBe(1);
    const log = ck.stats.last!.log;
    expect(log).toBeGreaterThanOrEqual(4);
    expect(ck.stats.interval).toBe(Math.min(32, Math.max(2, Math.round((2 * 60) / log))));
    expect(ck.stats.interval).toBeGreaterThan(2);
    const stretched = ck.stats.interval;
    await commits(stretched - 1, 2);
    expect(ck.stats.checkpoints).toBe(1); // not yet due
    await commits(1, 2);
    expect(ck.stats.checkpoints).toBe(2);
    // Large transactions fill the WAL past the target: back to the minimum.
    await commits(ck.stats.interval, 40);
    expect(ck.stats.checkpoints).toBe(3);
    expect(ck.stats.interval).toBe(2);
    await ck.close();
    t.db.close();
  });

  it('never stretches past sixteen times the minimum, nor at all with no frame target', async () => {
    const t = table();
    const capped = new WalCheckpointer(t.db, 1, 1_000_000);
    t.commit(1);
    capped.committed();
    await capped.idle();
    expect(capped.stats.interval).toBe(16);
    await capped.close();
    const fixed = new WalCheckpointer(t.db, 3, 0);
    for (let i = 0; i < 3; i++) {
      t.commit(1);
      fixed.committed();
    }
    await fixed.idle();
    expect(fixed.stats).toMatchObject({ checkpoints: 1, interval: 3 });
    await fixed.close();
    t.db.close();
  });

  /** A second connection holding a read transaction at the WAL's current end: no checkpoint copies past it. */
  function pinnedReader(path: string) {
    const r = new Database(path, { readonly: true });
    r.prepare('BEGIN').run();
    r.prepare('SELECT count(*) AS n FROM t').get();
    return { release: () => (r.prepare('COMMIT').run(), r.close()) };
  }
  const walSize = (path: string) => statSync(`${path}-wal`).size;

  it('follows a checkpoint that left frames behind with a catch-up at the next commit, so the WAL starts over instead of growing', async () => {
    const t = table();
    const ck = new WalCheckpointer(t.db, 3, 0);
    t.commit();
    ck.committed();
    const reader = pinnedReader(t.path);
    t.commit();
    ck.committed();
    t.commit();
    ck.committed(); // due: it copies only up to the reader's snapshot
    await ck.idle();
    expect(ck.stats).toMatchObject({ checkpoints: 1, catchUps: 0 });
    expect(ck.stats.last!.checkpointed).toBeLessThan(ck.stats.last!.log);
    reader.release();
    t.commit(); // frames are still behind: this BEGIN cannot restart the WAL, so it grows
    ck.committed(); // one commit of an interval of three, but the last checkpoint left frames behind
    await ck.idle();
    expect(ck.stats).toMatchObject({ checkpoints: 2, catchUps: 1, interval: 3 });
    expect(ck.stats.last!.checkpointed).toBe(ck.stats.last!.log);
    const grown = walSize(t.path);
    t.commit(); // every frame is in the database: this BEGIN starts the WAL over from its beginning
    ck.committed();
    expect(walSize(t.path)).toBe(grown);
    await ck.idle();
    expect(ck.stats.checkpoints).toBe(2); // nothing was behind: back to the interval
    await ck.close();
    t.db.close();
  });

  it(`runs at most ${MAX_CATCH_UPS} catch-ups in a row, then waits for the interval again`, async () => {
    const t = table();
    const ck = new WalCheckpointer(t.db, 10, 0);
    t.commit();
    const reader = pinnedReader(t.path); // held throughout: every checkpoint leaves the later frames behind
    const commits = async (n: number) => {
      for (let i = 0; i < n; i++) {
        t.commit();
        ck.committed();
        await ck.idle();
      }
    };
    await commits(10);
    expect(ck.stats).toMatchObject({ checkpoints: 1, catchUps: 0 });
    await commits(MAX_CATCH_UPS + 3); // a catch-up at each of the first commits, then none: 3 commits since the last
    expect(ck.stats).toMatchObject({ checkpoints: 1 + MAX_CATCH_UPS, catchUps: MAX_CATCH_UPS });
    await commits(7); // the interval's tenth commit since the last catch-up
    expect(ck.stats).toMatchObject({ checkpoints: 2 + MAX_CATCH_UPS, catchUps: MAX_CATCH_UPS });
    await commits(1); // after a regular checkpoint, catch-ups again
    expect(ck.stats).toMatchObject({ checkpoints: 3 + MAX_CATCH_UPS, catchUps: MAX_CATCH_UPS + 1 });
    reader.release();
    await ck.close();
    t.db.close();
  });

  it('never blocks or breaks the writer: checkpoints after every commit while it keeps committing', async () => {
    const t = table();
    const ck = new WalCheckpointer(t.db, 1);
    for (let i = 0; i < 200; i++) {
      t.commit(2);
      ck.committed();
      if (i % 20 === 0) await new Promise((r) => setImmediate(r)); // let replies arrive mid-run
    }
    await ck.idle();
    expect(ck.stats.failed).toBeUndefined();
    expect(ck.stats.checkpoints).toBeGreaterThanOrEqual(1);
    await ck.close();
    t.db.close();
    const again = new Database(t.path, { readonly: true });
    expect(again.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 400 });
    again.close();
  });

  it('a worker that cannot open the database is given up and SQLite checkpoints inside COMMIT again', async () => {
    const t = table();
    const ck = new WalCheckpointer(t.db, 1);
    renameSync(t.path, `${t.path}.moved`); // the request connection keeps its open file; the worker finds none
    t.commit();
    ck.committed();
    await ck.idle();
    expect(ck.stats.failed).toMatch(/unable to open|no such file|does not exist/i);
    expect(t.db.pragma('wal_autocheckpoint', { simple: true })).toBe(1_000);
    ck.committed(); // given up: no new worker
    await ck.idle();
    expect(ck.stats.checkpoints).toBe(0);
    await ck.close();
    t.db.close();
  });

  it('a worker that cannot be started is given up without disturbing the commit that asked for it', async () => {
    const t = table();
    const ck = new WalCheckpointer(t.db, 1);
    const spawn = vi.spyOn(WalCheckpointer.prototype as unknown as { start(): unknown }, 'start').mockImplementation(() => {
      throw new Error('ERR_WORKER_INIT_FAILED');
    });
    try {
      t.commit();
      expect(() => ck.committed()).not.toThrow();
    } finally {
      spawn.mockRestore();
    }
    expect(ck.stats.failed).toBe('ERR_WORKER_INIT_FAILED');
    expect(t.db.pragma('wal_autocheckpoint', { simple: true })).toBe(1_000);
    await ck.idle(); // nothing left running
    await ck.close();
    t.db.close();
  });

  it('leaves an in-memory database alone', async () => {
    const db = new Database(':memory:');
    const ck = new WalCheckpointer(db, 1);
    ck.committed();
    await ck.idle();
    expect(ck.stats).toMatchObject({ checkpoints: 0, failed: 'not a WAL file' });
    await ck.close();
    db.close();
  });

  it('the store checkpoints its group commits on the worker and keeps every write across close and reopen', async () => {
    const path = join(dir, `${randomIds.next('db')}.db`);
    const store = SqliteStore.open(path, { create: true });
    const space = freshSpace();
    await publishAgent(store, space);
    const c = await chain(store, space, { root: 100n });
    const ids = [c.root, c.child, c.leaf];
    for (let i = 0; i < 20; i++) await store.ledger.admit(await admission(store, space, ids, c.leaf));
    expect(store.writeStats.transactions).toBeGreaterThanOrEqual(16);
    await store.checkpointsIdle();
    expect(store.checkpointStats.checkpoints).toBeGreaterThanOrEqual(1);
    await store.close();
    expect(store.checkpointStats.failed).toBeUndefined();
    const again = SqliteStore.open(path);
    expect((await again.ledger.tree(c.root))?.balances.find((b) => b.dimension === 'units')).toMatchObject({ reserved: '20' });
    await again.close();
  });
});
