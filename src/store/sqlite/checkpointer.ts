/**
 * WAL checkpoints off the request thread (issue #24). SQLite's automatic
 * checkpoint runs inside the COMMIT that takes the WAL past 1,000 pages: it
 * syncs the WAL, copies its pages into the database and syncs the database
 * file, all on the event loop. Measured at c=32 on the bench's two cores,
 * that was half of all COMMIT time (p90 COMMIT 16 ms with it, 3.4 ms without).
 *
 * Here a worker thread with its own connection runs PASSIVE checkpoints —
 * they take no write lock and never wait for one (sqlite.org "wal_checkpoint"),
 * so requests keep committing meanwhile — after every `every` committed
 * transactions of the request connection, or more when they leave the WAL
 * short of `frames`. The request connection keeps its
 * own automatic checkpoint as a backstop at a far larger WAL
 * (`BACKSTOP_PAGES`), for a worker that falls behind; a worker that fails or
 * cannot start is given up and the connection goes back to SQLite's default.
 * A checkpoint only moves committed pages from the WAL into the database, so
 * nothing here decides what is durable: the group commit's fsync still does.
 *
 * SQLite starts the WAL over from its beginning only at a write transaction's
 * BEGIN that finds every frame already in the database (sqlite.org "WAL
 * reset"). A passive checkpoint copies what the WAL held when it began, and
 * the request connection goes on committing meanwhile, so under steady load a
 * checkpoint always left frames behind it: the WAL grew by every interval
 * until the backstop checkpointed it inside a request's COMMIT (issue #24:
 * 2.8 % of the request thread at c=32, WAL up to 16,000 frames). A checkpoint
 * that left frames behind is therefore followed by a short one at the next
 * commit, which copies only those, so the WAL can start over.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { isWalFile, type Db } from './database.ts';

/** Fewest committed transactions between two checkpoints: ≈ 3,700 WAL frames at c=32 (≈ 230 per shared transaction). */
export const CHECKPOINT_EVERY = 16;
/**
 * WAL frames a checkpoint should find. Past {@link CHECKPOINT_EVERY}
 * transactions the interval stretches (at most {@link MAX_STRETCH}-fold)
 * until the WAL holds about this many: at c=1 a transaction writes ≈ 50
 * frames, and a checkpoint every 16 copied the same hot pages (heads,
 * counters, index leaves) into the database again and again — the worker
 * took 0.36-0.55 ms per delegated call at c=1, 0.21-0.25 ms with 64
 * (issue #24, /proc per thread). 4,000 frames is a 16 MiB WAL.
 */
export const CHECKPOINT_FRAMES = 4_000;
/** Most the interval stretches past its minimum. */
const MAX_STRETCH = 16;
/** Most catch-up checkpoints in a row, for a WAL that commits outrun; then the interval again. */
export const MAX_CATCH_UPS = 2;
/** The request connection's own automatic checkpoint, while the worker keeps up: ≈ 64 MiB of WAL. */
export const BACKSTOP_PAGES = 16_000;
/** SQLite's default, restored when the worker is given up. */
const DEFAULT_PAGES = 1_000;

/** What the worker runs: CommonJS, evaluated, so it needs no loader for TypeScript. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
let db;
try {
  db = new Database(workerData.path, { fileMustExist: true });
  db.pragma('wal_autocheckpoint = 0');
  db.pragma('busy_timeout = 0');
} catch (e) {
  parentPort.postMessage({ ok: false, message: String(e && e.message) });
}
parentPort.on('message', (m) => {
  if (m === 'close' || !db) {
    if (db) db.close();
    parentPort.close();
    return;
  }
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ ok: true, busy: Number(r.busy), log: Number(r.log), checkpointed: Number(r.checkpointed) });
  } catch (e) {
    parentPort.postMessage({ ok: false, message: String(e && e.message) });
  }
});
`;

type Reply = { ok: true; busy: number; log: number; checkpointed: number } | { ok: false; message: string };

export interface CheckpointStats {
  /** Checkpoints the worker finished. */
  checkpoints: number;
  /** Committed transactions between checkpoints now. */
  interval: number;
  /** Of those, the short ones run at the next commit after one that left frames behind. */
  catchUps: number;
  /** WAL frames in the log and copied by the last one. */
  last?: { log: number; checkpointed: number; busy: boolean };
  /** Why the worker was given up, if it was. */
  failed?: string;
}

export class WalCheckpointer {
  private worker: Worker | undefined;
  private running = false;
  private since = 0;
  private exited: Promise<void> | undefined;
  private waiters: Array<() => void> = [];
  readonly stats: CheckpointStats;
  /** Transactions the checkpoint under way covers (those since the one before). */
  private covered = 0;
  /** The last checkpoint left frames behind it (commits landed while it ran, or a reader held it back). */
  private behind = false;
  /** Catch-ups run in a row, the one under way included (bounded by {@link MAX_CATCH_UPS}); 0 while a regular one runs. */
  private inRow = 0;

  /**
   * @param db the request connection (a file in WAL mode; anything else is left alone)
   * @param every fewest committed transactions between checkpoints
   * @param frames WAL frames a checkpoint should find (0: every `every` transactions, never more)
   */
  constructor(
    private readonly db: Db,
    private readonly every = CHECKPOINT_EVERY,
    private readonly frames = CHECKPOINT_FRAMES,
  ) {
    if (!Number.isInteger(every) || every < 1) throw new RangeError('every must be a positive integer');
    this.stats = { checkpoints: 0, catchUps: 0, interval: every };
    if (!isWalFile(db)) this.stats.failed = 'not a WAL file';
    else db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  }

  /**
   * One transaction committed on the request connection; starts a checkpoint
   * when one is due and none is running. Never throws: it runs between a
   * batch's COMMIT and its callers' answers (group-commit.ts).
   */
  committed(): void {
    if (this.stats.failed !== undefined) return;
    this.since++;
    if (this.running) return;
    const catchUp = this.since < this.stats.interval;
    if (catchUp && !(this.behind && this.inRow < MAX_CATCH_UPS)) return;
    this.inRow = catchUp ? this.inRow + 1 : 0;
    this.covered = this.since;
    this.since = 0;
    this.running = true;
    try {
      this.start().postMessage('checkpoint');
    } catch (err) {
      this.giveUp(err instanceof Error ? err.message : String(err));
    }
  }

  /** Resolves when no checkpoint is running (tests). */
  idle(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Stops the worker (after the checkpoint under way, if any); the connection goes back to SQLite's default. */
  async close(): Promise<void> {
    if (this.worker) {
      // Referenced again: the caller awaits its exit, and an unreferenced worker would let the event loop end first.
      this.worker.ref();
      this.worker.postMessage('close');
      await this.exited;
    }
    this.restoreDefault();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = (this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { driver: createRequire(import.meta.url).resolve('better-sqlite3'), path: this.db.name },
    }));
    // A checkpoint under way must not keep the process alive; an interrupted one is like a crash, which WAL recovers.
    worker.unref();
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (reply: Reply) => this.settle(reply));
    worker.on('error', (err) => this.giveUp(err.message));
    worker.on('exit', () => {
      if (this.running) this.giveUp('worker exited');
    });
    return worker;
  }

  private settle(reply: Reply): void {
    if (!reply.ok) return this.giveUp(reply.message);
    const catchUp = this.inRow > 0;
    this.stats.checkpoints++;
    if (catchUp) this.stats.catchUps++;
    this.stats.last = { log: reply.log, checkpointed: reply.checkpointed, busy: reply.busy !== 0 };
    this.behind = this.since > 0 || reply.checkpointed < reply.log;
    if (!this.behind) this.inRow = 0;
    // The WAL restarts after a complete checkpoint, so its length is about what the covered transactions wrote
    // (a catch-up's is the whole WAL it could not restart, so it says nothing about the interval).
    if (this.frames > 0 && !catchUp) {
      const due = Math.round((this.covered * this.frames) / Math.max(1, reply.log));
      this.stats.interval = Math.min(this.every * MAX_STRETCH, Math.max(this.every, due));
    }
    this.finish();
  }

  private giveUp(why: string): void {
    this.stats.failed ??= why;
    this.restoreDefault();
    void this.worker?.terminate();
    this.finish();
  }

  private finish(): void {
    this.running = false;
    for (const w of this.waiters.splice(0)) w();
  }

  private restoreDefault(): void {
    if (this.db.open && this.stats.failed !== 'not a WAL file') this.db.pragma(`wal_autocheckpoint = ${DEFAULT_PAGES}`);
  }
}
