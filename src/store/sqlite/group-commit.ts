/**
 * Group commit for the embedded store (issue #15; DESIGN.md "Performance
 * floor: group commit for durable admission"). With WAL and
 * synchronous=FULL every COMMIT costs one fsync, so one commit per admission
 * can never exceed the disk's commit rate. Transaction programs submitted
 * while a batch is pending share one BEGIN IMMEDIATE … COMMIT:
 *
 * - each program runs inside its own SAVEPOINT (a lone program, in the
 *   transaction itself), so a program that throws (a refusal, ADR-0014 "no
 *   dispatch") rolls back only its own writes and its caller alone sees the
 *   error;
 * - programs run in submission order and each sees the writes of those before
 *   it, exactly as if each had committed alone in that order;
 * - every caller's promise settles only after the shared COMMIT returned and
 *   the WAL holding it was fsynced, so nothing is acknowledged, and no effect
 *   dispatched, before it is durable; if the COMMIT (or the transaction as a
 *   whole) fails, every program of the batch is rejected with storage_error,
 *   refusals included, since a refusal may rest on an earlier program's write
 *   that never became durable.
 *
 * The fsync is the one synchronous=FULL would do inside COMMIT, moved off the
 * event loop (issue #24: COMMIT was ~10 % of the request thread's time at
 * c=32; the WAL checkpoint left it too: checkpointer.ts): a batch commits
 * with synchronous=NORMAL — in WAL mode the frames are written, not synced —
 * and the WAL file is then synced (fdatasync, wal-sync.ts) on libuv's
 * thread pool while the next requests run; batches that commit meanwhile
 * share the next fsync. WAL frames are ordered, so a synced batch
 * implies every batch before it. Between its COMMIT and its fsync a batch's
 * rows are visible to reads but acknowledged to no caller; a process crash
 * keeps them (the kernel holds the written pages), a power loss may drop
 * them, and with them only batches nobody was answered for. A failed fsync
 * leaves the durability of every unsynced batch unknown: their callers get
 * storage_error and the store takes no more writes (retrying an fsync can
 * succeed without the lost pages, as PostgreSQL learnt); a restart recovers
 * from what the disk holds.
 *
 * So the connection runs at synchronous=NORMAL from the moment a group commit
 * takes it over, and every write on it must be a program submitted here
 * (SqliteStore routes push, work queue, content and identity writes here too).
 * Issue #24: it was set to NORMAL and back around each batch, two PRAGMA
 * statements compiled afresh per transaction (SQLite applies a pragma when it
 * compiles it), while those other writers committed on their own with
 * synchronous=FULL, each an fsync inside its statement, on the event loop.
 *
 * better-sqlite3 is synchronous, so a batch runs start to finish inside one
 * callback: no read of this connection can observe a half-finished batch.
 *
 * Another process's writer (`baton serve --workers`, a second gateway on the
 * file) may hold the write lock. SQLite's busy handler would wait for it by
 * sleeping inside BEGIN IMMEDIATE — blocking this process's event loop, so
 * none of its requests moved while it waited. The batch instead asks for the
 * lock without waiting, and where it is taken waits on a timer (at most
 * {@link LOCK_RETRY_MAX_MS} between tries) while the event loop serves on;
 * programs submitted meanwhile join the batch. It fails with storage_error
 * (`SQLITE_BUSY`) once the busy_timeout the connection was opened with has
 * passed, as before.
 *
 * So the connection's own busy_timeout is 0 too, from the takeover on (issue
 * #24: it was set to 0 and back around each BEGIN, another two PRAGMA
 * compiles per transaction). Every write is a batch here, and a read in WAL
 * mode meets a lock only while another connection recovers the WAL after a
 * crash, which cannot happen while this connection keeps the WAL index
 * open (sqlite.org/wal.html "Sometimes Queries Return SQLITE_BUSY In WAL
 * Mode"; the in-process retries of a read that races a commit are SQLite's
 * own, not the busy handler). Only closing, which is synchronous, waits in
 * SQLite: its busy_timeout is set back for that.
 */
import { storageError } from '../../errors.ts';
import { isWalFile, type Db } from './database.ts';
import { walSync, type WalSyncer } from './wal-sync.ts';

/** Most programs in one transaction: bounds one batch's time on the event loop and its undo. */
export const MAX_BATCH = 64;

/** The longest pause between two tries for a write lock another connection holds (they start at 1 ms and double). */
export const LOCK_RETRY_MAX_MS = 8;

/** The write lock was held by another connection when the batch asked for it. */
const isBusy = (err: unknown): boolean => String((err as { code?: unknown } | null)?.code).startsWith('SQLITE_BUSY');

interface Pending {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Counters for tests and diagnostics: transactions committed and programs run in them. */
export interface GroupCommitStats {
  transactions: number;
  programs: number;
  failedTransactions: number;
  /** fsyncs of the WAL done after commits (0 where COMMIT syncs itself). */
  syncs: number;
}

export interface GroupCommitOptions {
  /** Most programs per transaction. */
  maxBatch?: number;
  /** How a committed batch is made durable (tests); by default the WAL file's fsync. */
  sync?: WalSyncer;
  /** Called after each transaction commits, before its fsync (the WAL checkpointer counts them). */
  onCommit?: () => void;
}

/** A committed batch waiting for its fsync: each program's outcome, delivered once the WAL is synced. */
type Committed = { batch: Pending[]; outcomes: Outcome[] };

export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  /** The wait for a write lock another connection holds: when it began, the next pause, and the timer of the next try. */
  private lockWait: { since: number; pauseMs: number; timer: NodeJS.Timeout } | undefined;
  /** The connection's busy_timeout as it was handed over: how long a batch waits for the write lock before it fails. */
  readonly busyMs: number;
  private readonly sql;
  /** The fsync of committed batches, where commits leave it to us (WAL with synchronous FULL); else COMMIT syncs. */
  private readonly wal: WalSyncer | undefined;
  private unsynced: Committed[] = [];
  /** The batches the fsync under way covers (undefined: none under way). */
  private syncing: Committed[] | undefined;
  /** Set by a failed fsync: no write is taken after it. */
  private broken: unknown;
  readonly stats: GroupCommitStats = { transactions: 0, programs: 0, failedTransactions: 0, syncs: 0 };

  private readonly maxBatch: number;
  private readonly onCommit: (() => void) | undefined;

  /**
   * @param db the connection (synchronous)
   * @param wrap turns a non-Baton error into the caller-visible one (storage_error)
   */
  constructor(
    private readonly db: Db,
    private readonly wrap: (err: unknown) => unknown,
    opts: GroupCommitOptions = {},
  ) {
    const { maxBatch = MAX_BATCH, sync } = opts;
    if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError('maxBatch must be a positive integer');
    this.maxBatch = maxBatch;
    this.onCommit = opts.onCommit;
    this.busyMs = Number(db.pragma('busy_timeout', { simple: true }));
    const full = Number(db.pragma('synchronous', { simple: true })) >= 2;
    this.wal = full && isWalFile(db) ? (sync ?? walSync(db.name)) : undefined;
    // From here COMMIT writes the WAL without syncing it; the fsync is ours (above).
    if (this.wal) db.pragma('synchronous = NORMAL');
    // …and BEGIN IMMEDIATE never sleeps in SQLite's busy handler: a lock another connection holds is waited for on a timer.
    if (this.busyMs > 0) db.pragma('busy_timeout = 0');
    // Prepared once: the batch's bookends run for every program.
    const prepare = (text: string) => db.prepare(text);
    this.sql = {
      begin: prepare('BEGIN IMMEDIATE'),
      savepoint: prepare('SAVEPOINT program'),
      release: prepare('RELEASE program'),
      rollbackTo: prepare('ROLLBACK TO program'),
      commit: prepare('COMMIT'),
      rollback: prepare('ROLLBACK'),
    };
  }

  /** Runs `fn` inside a shared write transaction; settles after that transaction's COMMIT and the fsync that makes it durable. */
  submit<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.broken !== undefined) return reject(this.broken);
      this.queue.push({ run: fn, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  /** Runs every queued program, makes every batch durable and lets go of the WAL (before closing the connection). */
  close(): void {
    this.drain();
    this.wal?.close();
  }

  /** Runs every queued program now and makes every batch durable. */
  private drain(): void {
    if (this.lockWait) clearTimeout(this.lockWait.timer);
    this.lockWait = undefined;
    // Closing is synchronous: here the batch waits for the lock inside SQLite's busy handler, as long as configured.
    if (this.queue.length > 0 && this.busyMs > 0) this.db.pragma(`busy_timeout = ${this.busyMs}`);
    while (this.queue.length > 0) this.flush(true);
    if (!this.wal || (this.unsynced.length === 0 && !this.syncing)) return;
    // This fsync covers the batches an fsync under way covers too; its callback then settles nothing (a promise settles once).
    const waiting = [...(this.syncing ?? []), ...this.unsynced.splice(0)];
    let err: unknown;
    try {
      this.wal.syncNow();
    } catch (e) {
      err = e;
    }
    this.answer(waiting, err);
  }

  private schedule(): void {
    // While the lock is being waited for, the next try takes what was submitted meanwhile.
    if (this.scheduled || this.lockWait) return;
    this.scheduled = true;
    // setImmediate, not a microtask: every request whose I/O arrived in this
    // turn of the event loop gets to submit its program before the batch runs.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** Runs the next batch; `block`: wait for a write lock another connection holds inside SQLite (closing). */
  private flush(block = false): void {
    const batch = this.queue.splice(0, this.maxBatch);
    let outcomes: Outcome[] | undefined;
    let failure: unknown;
    try {
      if (batch.length > 0) outcomes = this.transaction(batch, block);
    } catch (err) {
      if (this.waitForLock(batch, err)) return;
      failure = err;
    }
    // Any wait for the lock is over: what is still queued goes on the usual schedule.
    this.lockWait = undefined;
    if (this.queue.length > 0) this.schedule();
    if (batch.length === 0) return;
    if (outcomes === undefined) {
      this.stats.failedTransactions++;
      const error = this.wrap(failure);
      for (const p of batch) p.reject(error);
      return;
    }
    this.stats.transactions++;
    this.stats.programs += batch.length;
    this.onCommit?.();
    if (!this.wal) return this.answer([{ batch, outcomes }]);
    this.unsynced.push({ batch, outcomes });
    this.startSync();
  }

  /**
   * Where another connection held the write lock (nothing of the batch ran),
   * puts the batch back first in line and tries again on a timer, until the
   * busy timeout has passed since the first try; false when it is not that,
   * or the wait is over (the batch then fails with the error).
   */
  private waitForLock(batch: Pending[], err: unknown): boolean {
    if (!(err instanceof LockTaken)) return false;
    const now = performance.now();
    const since = this.lockWait?.since ?? now;
    if (now - since >= this.busyMs) return false;
    const pauseMs = Math.min(this.lockWait ? this.lockWait.pauseMs * 2 : 1, LOCK_RETRY_MAX_MS);
    this.queue.unshift(...batch);
    const timer = setTimeout(() => this.flush(), pauseMs);
    this.lockWait = { since, pauseMs, timer };
    return true;
  }

  /** One fsync for every batch committed since the last one began; the next starts when it ends. */
  private startSync(): void {
    if (this.syncing || this.unsynced.length === 0 || !this.wal) return;
    const covered = (this.syncing = this.unsynced.splice(0));
    this.wal.sync((err) => {
      this.syncing = undefined;
      this.stats.syncs++;
      this.answer(covered, err ?? undefined);
      this.startSync();
    });
  }

  /** Settles committed batches: each program's own outcome, or — the fsync failed — storage_error for all, and for every later write. */
  private answer(committed: Committed[], syncError?: unknown): void {
    if (syncError !== undefined) {
      this.broken ??= storageError('a committed write could not be made durable (fsync failed); the store takes no more writes', { reason: 'sync_failed' }, syncError);
      const pending = [...committed, ...this.unsynced.splice(0)];
      for (const { batch } of pending) for (const p of batch) p.reject(this.broken);
      for (const p of this.queue.splice(0)) p.reject(this.broken);
      return;
    }
    for (const { batch, outcomes } of committed) {
      batch.forEach((p, i) => {
        const o = outcomes[i]!;
        if (o.ok) p.resolve(o.value);
        else p.reject(this.wrap(o.error));
      });
    }
  }

  /** BEGIN IMMEDIATE, one SAVEPOINT per program (none for a lone one), COMMIT; throws (after rolling back) if the transaction as a whole fails. */
  private transaction(batch: Pending[], block: boolean): Outcome[] {
    const { db, sql } = this;
    this.begin(block);
    try {
      if (batch.length === 1) return [this.alone(batch[0]!)];
      const outcomes: Outcome[] = [];
      for (const p of batch) {
        sql.savepoint.run();
        outcomes.push(this.attempt(p, () => sql.rollbackTo.run()));
        sql.release.run();
      }
      sql.commit.run();
      return outcomes;
    } catch (err) {
      if (db.inTransaction) sql.rollback.run();
      throw err;
    }
  }

  /**
   * BEGIN IMMEDIATE; unless `block` (closing: the busy handler waits), a lock
   * another connection holds throws LockTaken at once (the connection's
   * busy_timeout is 0) instead of sleeping on the event loop.
   */
  private begin(block: boolean): void {
    if (block) return void this.sql.begin.run();
    try {
      this.sql.begin.run();
    } catch (err) {
      throw isBusy(err) ? new LockTaken(err) : err;
    }
  }

  /**
   * A batch of one (every batch at c=1) needs no savepoint: the transaction
   * is the program's own, so a refusal rolls back the whole of it. A
   * savepoint makes SQLite copy every page the program dirties into a
   * statement journal and free it on RELEASE (issue #24: RELEASE alone was
   * ~30 µs per transaction at c=1). The refusal is still answered after the
   * next fsync, like any other outcome: it may rest on an earlier batch's
   * write that is committed but not yet durable.
   */
  private alone(p: Pending): Outcome {
    const { sql } = this;
    const outcome = this.attempt(p, () => sql.rollback.run());
    if (outcome.ok) sql.commit.run();
    return outcome;
  }

  /**
   * Runs one program; a throw is its outcome, after `undo` rolled back its
   * writes — unless SQLite already rolled back the whole transaction itself
   * (I/O, full disk, busy), which fails the batch.
   */
  private attempt(p: Pending, undo: () => void): Outcome {
    try {
      return { ok: true, value: p.run() };
    } catch (error) {
      if (!this.db.inTransaction) throw storageError('transaction rolled back by the database', { reason: 'rolled_back' }, error);
      undo();
      return { ok: false, error };
    }
  }
}

/** BEGIN IMMEDIATE found the write lock held by another connection; it carries SQLite's SQLITE_BUSY. */
class LockTaken extends Error {
  readonly code = 'SQLITE_BUSY';
  constructor(readonly busy: unknown) {
    super('the write lock is held by another connection', { cause: busy });
  }
}
