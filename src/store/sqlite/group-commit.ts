/**
 * Group commit for the embedded store (issue #15; DESIGN.md "Performance
 * floor: group commit for durable admission"). With WAL and
 * synchronous=FULL every COMMIT costs one fsync, so one commit per admission
 * can never exceed the disk's commit rate. Transaction programs submitted
 * while a batch is pending share one BEGIN IMMEDIATE … COMMIT:
 *
 * - each program runs inside its own SAVEPOINT, so a program that throws (a
 *   refusal, ADR-0014 "no dispatch") rolls back only its own writes and its
 *   caller alone sees the error;
 * - programs run in submission order and each sees the writes of those before
 *   it, exactly as if each had committed alone in that order;
 * - every caller's promise settles only after the shared COMMIT returned, so
 *   nothing is acknowledged, and no effect dispatched, before it is durable;
 *   if the COMMIT (or the transaction as a whole) fails, every program of the
 *   batch is rejected with storage_error, refusals included, since a refusal
 *   may rest on an earlier program's write that never became durable.
 *
 * better-sqlite3 is synchronous, so a batch runs start to finish inside one
 * callback: no read of this connection can observe a half-finished batch.
 */
import { storageError } from '../../errors.ts';
import type { Db } from './database.ts';

/** Most programs in one transaction: bounds one batch's time on the event loop and its undo. */
export const MAX_BATCH = 64;

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
}

export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  private readonly sql;
  readonly stats: GroupCommitStats = { transactions: 0, programs: 0, failedTransactions: 0 };

  /**
   * @param db the connection (synchronous)
   * @param wrap turns a non-Baton error into the caller-visible one (storage_error)
   * @param maxBatch most programs per transaction
   */
  constructor(
    private readonly db: Db,
    private readonly wrap: (err: unknown) => unknown,
    private readonly maxBatch = MAX_BATCH,
  ) {
    if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError('maxBatch must be a positive integer');
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

  /** Runs `fn` inside a shared write transaction; settles after that transaction's COMMIT. */
  submit<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run: fn, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  /** Runs every queued program now (before closing the connection). */
  drain(): void {
    while (this.queue.length > 0) this.flush();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate, not a microtask: every request whose I/O arrived in this
    // turn of the event loop gets to submit its program before the batch runs.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    const batch = this.queue.splice(0, this.maxBatch);
    if (this.queue.length > 0) this.schedule();
    if (batch.length === 0) return;
    let outcomes: Outcome[];
    try {
      outcomes = this.transaction(batch);
    } catch (err) {
      this.stats.failedTransactions++;
      const error = this.wrap(err);
      for (const p of batch) p.reject(error);
      return;
    }
    this.stats.transactions++;
    this.stats.programs += batch.length;
    batch.forEach((p, i) => {
      const o = outcomes[i]!;
      if (o.ok) p.resolve(o.value);
      else p.reject(this.wrap(o.error));
    });
  }

  /** BEGIN IMMEDIATE, one SAVEPOINT per program, COMMIT; throws (after rolling back) if the transaction as a whole fails. */
  private transaction(batch: Pending[]): Outcome[] {
    const { db, sql } = this;
    sql.begin.run();
    try {
      const outcomes: Outcome[] = [];
      for (const p of batch) {
        sql.savepoint.run();
        try {
          outcomes.push({ ok: true, value: p.run() });
          sql.release.run();
        } catch (error) {
          // Some failures (I/O, full disk, busy) make SQLite roll back the whole transaction itself.
          if (!db.inTransaction) throw storageError('transaction rolled back by the database', { reason: 'rolled_back' }, error);
          sql.rollbackTo.run();
          sql.release.run();
          outcomes.push({ ok: false, error });
        }
      }
      sql.commit.run();
      return outcomes;
    } catch (err) {
      if (db.inTransaction) sql.rollback.run();
      throw err;
    }
  }
}
