/** The SQLite adapter of the storage port: the embedded default. */
import type Database from 'better-sqlite3';
import { invalidRequest, storageError } from '../../errors.ts';
import { LEDGER_LIMITS, type LedgerLimits } from '../../ledger/types.ts';
import type { Envelope } from '../../records/envelope.ts';
import { randomIds, type IdSource } from '../../records/ids.ts';
import { balanceAuditSql, composeControl, composeLedger, type BalanceAuditRow, type StoreReads } from '../compose.ts';
import { composeGauges, type GaugeReads } from '../gauges-sql.ts';
import { composeAudit } from '../audit-sql.ts';
import type { AuditReads, ControlStore, LedgerStore, PushStore, PutResult, Store, WorkStore } from '../port.ts';
import type { Program, ReservationRow } from '../tx/ops.ts';
import { putRecord } from '../../records/put.ts';
import { runSync } from '../tx/run.ts';
import type { TreeRow } from '../tree.ts';
import { checkpointTruncate, openDatabase, type Db, type OpenOptions } from './database.ts';
import { WalCheckpointer, type CheckpointStats } from './checkpointer.ts';
import { GroupCommit, type GroupCommitStats } from './group-commit.ts';
import { sqliteOps } from './ops.ts';
import { sqliteDialect, sqlitePush } from './push.ts';
import { composeWork } from '../work-sql.ts';
import { composeContent, type ContentStore } from '../content-sql.ts';
import { sqliteMeta } from './meta.ts';
import type { MetaStore } from '../meta.ts';
import { recordReads } from './records.ts';

export interface SqliteStoreOptions extends OpenOptions {
  ids?: IdSource;
  limits?: LedgerLimits;
}

export class SqliteStore implements Store {
  readonly control: ControlStore;
  readonly ledger: LedgerStore;
  readonly push: PushStore;
  readonly work: WorkStore;
  readonly content: ContentStore;
  readonly audit: AuditReads;
  readonly meta: MetaStore;
  readonly gauges: GaugeReads;
  private readonly records;
  private readonly ops;
  private readonly commits: GroupCommit;
  private readonly checkpoints: WalCheckpointer;

  private constructor(
    private readonly db: Db,
    ids: IdSource,
    limits: LedgerLimits,
  ) {
    this.ops = sqliteOps(db);
    this.records = recordReads(db);
    // Every ledger, control and record write shares commits with those queued beside it (group-commit.ts).
    // …and the WAL they grow is checkpointed by a worker thread, not inside a request's COMMIT (checkpointer.ts).
    this.checkpoints = new WalCheckpointer(db);
    this.commits = new GroupCommit(db, (err) => this.storageFault(err), { onCommit: () => this.checkpoints.committed() });
    const run = async <R>(make: () => Program<R>): Promise<R> => this.commits.submit(() => runSync(make(), this.ops));
    const events = db.prepare<[string, string, number, number], { document: string }>(
      'SELECT document FROM control_events WHERE project_id = ? AND branch_id = ? AND position > ? ORDER BY position LIMIT ?',
    );
    const unresolved = db.prepare<[number], ReservationRow>(
      "SELECT * FROM ledger_reservations WHERE status IN ('held', 'unknown') ORDER BY created_at, reservation_id LIMIT ?",
    );
    const treeRows = db.prepare<[string], TreeRow>(
      `SELECT n.node_id, n.parent_id, n.depth, n.not_after, b.dimension, b.ceiling, b.consumed, b.reserved
       FROM ledger_nodes n LEFT JOIN ledger_balances b ON b.node_id = n.node_id WHERE n.root_id = ? ORDER BY n.depth, n.node_id, b.dimension`,
    );
    const audit = db.prepare<[string], BalanceAuditRow>(balanceAuditSql('?'));
    const reads: StoreReads = {
      head: async (s) => this.guard(() => this.ops.streamHead(s, 'none')),
      // One statement for all of them (store reads run outside any write transaction, so this is one snapshot too).
      heads: async (streams) => this.guard(() => this.ops.streamHeads(streams, 'none')),
      events: async (s, after, limit) => this.guard(() => events.all(s.project_id, s.branch_id, after, limit).map((r) => r.document)),
      node: async (id) => this.guard(() => this.ops.node(id, 'none')),
      reservation: async (id) => this.guard(() => this.ops.reservation(id, 'none')),
      unresolved: async (limit) => this.guard(() => unresolved.all(limit)),
      treeRows: async (root) => this.guard(() => treeRows.all(root)),
      balanceAudit: async (root) => this.guard(() => audit.all(root)),
    };
    this.control = composeControl(run, reads, ids);
    this.ledger = composeLedger(run, reads, ids, limits);
    // Their writes too are programs of the group commit: the connection does not sync on COMMIT (group-commit.ts).
    const runners = { guard: <T>(fn: () => T) => this.guard(fn), write: <T>(fn: () => T) => this.commits.submit(fn) };
    this.push = sqlitePush(db, runners);
    this.work = composeWork(sqliteDialect(db, runners));
    // After the worker's checkpoint under way, if any: it holds the checkpoint lock, and a purge's TRUNCATE would find it busy.
    this.content = composeContent(sqliteDialect(db, runners), async () => {
      await this.checkpoints.idle();
      return this.guard(() => checkpointTruncate(db, this.commits.busyMs));
    });
    this.meta = sqliteMeta(db, runners);
    const scans = new Map<string, Database.Statement>(); // a fixed handful of texts
    const dialect = {
      p: () => '?',
      all: async <T>(sql: string, params: readonly unknown[]) =>
        this.guard(() => {
          let stmt = scans.get(sql);
          if (!stmt) scans.set(sql, (stmt = db.prepare(sql)));
          return stmt.all(...params) as T[];
        }),
    };
    this.audit = composeAudit(dialect);
    this.gauges = composeGauges(dialect);
  }

  static open(path: string, opts: SqliteStoreOptions = {}): SqliteStore {
    return new SqliteStore(openDatabase(path, opts), opts.ids ?? randomIds, opts.limits ?? LEDGER_LIMITS);
  }

  /** The underlying handle, for tests and diagnostics. */
  get handle(): Db {
    return this.db;
  }

  /** Write transactions committed and programs run in them (group commit), for tests and diagnostics. */
  get writeStats(): Readonly<GroupCommitStats> {
    return this.commits.stats;
  }

  /** The off-thread WAL checkpoints, for tests and diagnostics. */
  get checkpointStats(): Readonly<CheckpointStats> {
    return this.checkpoints.stats;
  }

  /** Resolves when no WAL checkpoint is running (tests). */
  checkpointsIdle(): Promise<void> {
    return this.checkpoints.idle();
  }

  async putRecord(record: Envelope): Promise<PutResult> {
    return this.commits.submit(() => runSync(putRecord(record, new Date().toISOString()), this.ops));
  }

  async getRecord(recordId: string, revisionId?: string): Promise<Envelope | undefined> {
    return this.guard(() => this.records.get(recordId, revisionId));
  }

  async listRevisions(recordId: string): Promise<Envelope[]> {
    return this.guard(() => this.records.revisions(recordId));
  }

  async listCurrent(schemaRef: string, opts: { limit: number; cursor?: string }): Promise<{ records: Envelope[]; cursor?: string }> {
    if (opts.cursor !== undefined && !/^\d{1,19}$/.test(opts.cursor)) throw invalidRequest('bad page cursor');
    return this.guard(() => this.records.current(schemaRef, Math.min(Math.max(opts.limit, 1), 1000), opts.cursor));
  }

  async ping(): Promise<void> {
    this.guard(() => this.db.prepare('SELECT 1').get());
  }

  async close(): Promise<void> {
    if (!this.db.open) return;
    this.commits.close(); // queued writes commit (or fail) before the connection goes
    await this.checkpoints.close();
    this.db.close();
  }

  /** SQLite's own errors (busy, I/O, closed, constraint) become storage_error; ours pass through. */
  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw this.storageFault(err);
    }
  }

  private storageFault(err: unknown): unknown {
    if (err instanceof Error && err.name === 'BatonError') return err;
    return storageError('database operation failed', { reason: (err as { code?: string }).code ?? 'unknown' }, err);
  }
}
