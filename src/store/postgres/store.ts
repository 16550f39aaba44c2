/**
 * The PostgreSQL adapter: several Baton processes behind a load balancer
 * share one database. One pooled client per transaction; conflicts that
 * PostgreSQL resolves by aborting (serialization 40001, deadlock 40P01, a
 * racing insert of the same new head 23505) are retried from the start, so
 * the program re-reads everything it decided on.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { invalidRequest, storageError, unavailable } from '../../errors.ts';
import { CONFLICT_CODES, codeOf, connectionLost, planMissed, sessionEndedBeforeApplying, stalePlan, worthReconnecting, wrapPgError as wrap } from './failure.ts';
import { namingClient, StatementNames } from './prepared.ts';
import { LEDGER_LIMITS, type LedgerLimits } from '../../ledger/types.ts';
import type { Envelope } from '../../records/envelope.ts';
import { randomIds, type IdSource } from '../../records/ids.ts';
import { balanceAuditSql, composeControl, composeLedger, type BalanceAuditRow, type StoreReads } from '../compose.ts';
import { decodeRecord, type RecordDocRow } from '../../records/decode.ts';
import { composeGauges, type GaugeReads } from '../gauges-sql.ts';
import { composeAudit } from '../audit-sql.ts';
import type { AuditReads, ControlStore, LedgerStore, PushStore, PutResult, Store, WorkStore } from '../port.ts';
import { composeWork } from '../work-sql.ts';
import { composeContent, type ContentStore } from '../content-sql.ts';
import type { HeadRow, NodeRow, Program, ReservationRow } from '../tx/ops.ts';
import { putRecord } from '../../records/put.ts';
import type { TreeRow } from '../tree.ts';
import { pgOps } from './ops.ts';
import { PgSession } from './session.ts';
import { runTransaction } from './transaction.ts';
import { pgDialect, pgPush } from './push.ts';
import { PG_MIGRATIONS } from './schema.ts';
import { tablesOf, type MetaStore } from '../meta.ts';
import { pgMeta } from './meta.ts';
import { CHECK_EVERY, GrowthStatistics } from './statistics.ts';

const MAX_ATTEMPTS = 25;
/** int8 as BigInt: budgets never pass through a lossy number. */
const TYPES = { getTypeParser: (oid: number, format?: string) => (oid === 20 ? BigInt : pg.types.getTypeParser(oid, format as 'text')) } as pg.CustomTypesConfig;
/** Whole-transaction retries after a lost connection (only when COMMIT was never sent). */
const MAX_RECONNECTS = 3;

export interface PgStoreOptions {
  ids?: IdSource;
  limits?: LedgerLimits;
  /** Pool size per process. */
  max?: number;
  /** Parameterised statements prepared once per connection (prepared.ts); off behind a pooler that cannot keep them. Default on. */
  preparedStatements?: boolean;
  /** Committed transactions between two checks for tables that have outgrown their statistics (statistics.ts); 0: none. */
  analyzeEvery?: number;
}

export class PgStore implements Store {
  readonly control: ControlStore;
  readonly ledger: LedgerStore;
  readonly push: PushStore;
  readonly work: WorkStore;
  readonly content: ContentStore;
  readonly audit: AuditReads;
  readonly gauges: GaugeReads;
  readonly meta: MetaStore;
  /** Analyzes Baton's tables while they outgrow what the planner knows of them (statistics.ts). */
  readonly statistics: GrowthStatistics;

  private constructor(
    private readonly pool: pg.Pool,
    /** The named statements of this process (prepared.ts); undefined where they are off. */
    private readonly names: StatementNames | undefined,
    ids: IdSource,
    limits: LedgerLimits,
    analyzeEvery: number,
  ) {
    this.statistics = new GrowthStatistics(async (sql) => (await this.pool.query(sql)).rows as unknown[], tablesOf(PG_MIGRATIONS), analyzeEvery);
    const run = <R>(make: () => Program<R>) => this.transaction(make);
    const reads: StoreReads = {
      head: (s) => this.one<HeadRow>('SELECT * FROM control_heads WHERE project_id = $1 AND branch_id = $2', [s.project_id, s.branch_id]),
      // One statement, so one snapshot: the heads are read as of the same instant.
      heads: async (streams) =>
        streams.length === 0
          ? []
          : this.read<HeadRow>(
              'SELECT h.* FROM control_heads h JOIN unnest($1::text[], $2::text[]) AS s(project_id, branch_id) ON h.project_id = s.project_id AND h.branch_id = s.branch_id',
              [streams.map((s) => s.project_id), streams.map((s) => s.branch_id)],
            ),
      events: async (s, after, limit) =>
        (await this.read<{ document: string }>(
          'SELECT document FROM control_events WHERE project_id = $1 AND branch_id = $2 AND position > $3 ORDER BY position LIMIT $4',
          [s.project_id, s.branch_id, after, limit],
        )).map((r) => r.document),
      node: (id) => this.one<NodeRow>('SELECT * FROM ledger_nodes WHERE node_id = $1', [id]),
      reservation: (id) => this.one<ReservationRow>('SELECT * FROM ledger_reservations WHERE reservation_id = $1', [id]),
      unresolved: (limit) =>
        this.read<ReservationRow>("SELECT * FROM ledger_reservations WHERE status IN ('held', 'unknown') ORDER BY created_at, reservation_id LIMIT $1", [limit]),
      treeRows: (root) =>
        this.read<TreeRow>(
          `SELECT n.node_id, n.parent_id, n.depth, n.not_after, b.dimension, b.ceiling, b.consumed, b.reserved
           FROM ledger_nodes n LEFT JOIN ledger_balances b ON b.node_id = n.node_id WHERE n.root_id = $1 ORDER BY n.depth, n.node_id, b.dimension`,
          [root],
        ),
      balanceAudit: (root) => this.read<BalanceAuditRow>(balanceAuditSql('$1'), [root]),
    };
    this.control = composeControl(run, reads, ids);
    this.ledger = composeLedger(run, reads, ids, limits);
    this.push = pgPush((sql, params) => this.query(sql, params));
    this.work = composeWork(pgDialect((sql, params) => this.query(sql, params)));
    // No VACUUM: it cannot run in a transaction block, needs table ownership, and would not scrub the WAL or backups anyway (README "Data retention").
    this.content = composeContent(pgDialect((sql, params) => this.query(sql, params)), async () => true);
    this.audit = composeAudit({ p: (n) => `$${n}`, all: (sql, params) => this.read(sql, [...params]) });
    this.gauges = composeGauges({ p: (n) => `$${n}`, all: (sql, params) => this.read(sql, [...params]) });
    this.meta = pgMeta({ read: (sql, params) => this.read(sql, params), write: (sql, params) => this.query(sql, params), withClient: (fn) => this.inTransaction(fn) });
  }

  /** Connects, migrates (once, under an advisory lock) and returns the store. */
  static async open(url: string, opts: PgStoreOptions = {}): Promise<PgStore> {
    const names = opts.preparedStatements === false ? undefined : new StatementNames();
    const pool = new pg.Pool({
      connectionString: url,
      max: opts.max ?? 10,
      connectionTimeoutMillis: 5_000,
      ...(names ? { Client: namingClient(names) } : {}),
      types: TYPES,
    });
    pool.on('error', () => {}); // idle-client errors surface on the next query instead of crashing the process
    // And on every client, for its whole life: pg emits 'error' on a client whose backend is terminated even
    // between pg-pool's own listeners (seen once in ~6 runs of e2e/pg-terminate under load, the process died).
    // The failure still reaches whichever query or transaction was using it; an 'error' never ends the process.
    pool.on('connect', (client) => void client.on('error', () => {}));
    const store = new PgStore(pool, names, opts.ids ?? randomIds, opts.limits ?? LEDGER_LIMITS, opts.analyzeEvery ?? CHECK_EVERY);
    await store.migrate();
    return store;
  }

  async putRecord(record: Envelope): Promise<PutResult> {
    return this.transaction(() => putRecord(record, new Date().toISOString()));
  }

  async getRecord(recordId: string, revisionId?: string): Promise<Envelope | undefined> {
    const row =
      revisionId === undefined
        ? await this.one<RecordDocRow>('SELECT r.* FROM record_heads h JOIN records r ON r.revision_id = h.revision_id WHERE h.record_id = $1', [recordId])
        : await this.one<RecordDocRow>('SELECT * FROM records WHERE revision_id = $1 AND record_id = $2', [revisionId, recordId]);
    return row && decodeRecord(row);
  }

  async listRevisions(recordId: string): Promise<Envelope[]> {
    return (await this.read<RecordDocRow>('SELECT * FROM records WHERE record_id = $1 ORDER BY seq', [recordId])).map(decodeRecord);
  }

  async listCurrent(schemaRef: string, opts: { limit: number; cursor?: string }): Promise<{ records: Envelope[]; cursor?: string }> {
    if (opts.cursor !== undefined && !/^\d{1,19}$/.test(opts.cursor)) throw invalidRequest('bad page cursor');
    const limit = Math.min(Math.max(opts.limit, 1), 1000);
    const rows = await this.read<RecordDocRow & { seq: bigint }>(
      'SELECT r.* FROM record_heads h JOIN records r ON r.revision_id = h.revision_id WHERE r.schema_ref = $1 AND r.seq < $2 ORDER BY r.seq DESC LIMIT $3',
      [schemaRef, opts.cursor ?? String(1n << 62n), limit],
    );
    const last = rows[rows.length - 1];
    return { records: rows.map(decodeRecord), ...(rows.length === limit && last ? { cursor: String(last.seq) } : {}) };
  }

  /**
   * The readiness probe is a plain read: a pooled session that was cut (a
   * terminated backend) is replaced, as for any read; a server that cannot
   * be reached still fails it at once.
   */
  async ping(): Promise<void> {
    await this.read('SELECT 1', []);
  }

  async close(): Promise<void> {
    await this.statistics.settled();
    await this.pool.end();
  }

  private async migrate(): Promise<void> {
    const lease = await this.connect();
    const client = lease.client;
    try {
      await client.query('BEGIN');
      await client.query("SELECT pg_advisory_xact_lock(hashtext('baton-migrations'))");
      await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
      const { rows } = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
      const current = rows[0]?.v ?? 0;
      const latest = PG_MIGRATIONS[PG_MIGRATIONS.length - 1]!.version;
      if (current > latest) throw storageError('database schema is newer than this build', { current, latest });
      for (const m of PG_MIGRATIONS.filter((m) => m.version > current)) {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations(version, applied_at) VALUES ($1, $2)', [m.version, new Date().toISOString()]);
      }
      // ADR-0014: a schema that lost a table is incomplete state, not something to run on.
      const present = new Set((await client.query<{ t: string }>('SELECT table_name AS t FROM information_schema.tables WHERE table_schema = current_schema()')).rows.map((r) => r.t));
      const missing = tablesOf(PG_MIGRATIONS).filter((t) => !present.has(t));
      if (missing.length > 0) throw storageError('database is missing tables', { reason: 'missing_table', tables: missing });
      await client.query("INSERT INTO baton_meta(singleton, store_id, generation, created_at) VALUES (1, $1, 1, $2) ON CONFLICT (singleton) DO NOTHING", [
        `sto_${randomUUID().replace(/-/g, '')}`,
        new Date().toISOString(),
      ]);
      await client.query('COMMIT');
    } catch (err) {
      if (!lease.broken()) await client.query('ROLLBACK').catch(() => {});
      lease.release(lease.broken() ?? (connectionLost(err) ? err : undefined));
      throw wrap(lease.broken() ?? err);
    } finally {
      lease.release();
    }
  }

  /**
   * One program in one transaction on one client, its reads sent ahead and
   * its write riding with what follows it, its COMMIT included
   * (transaction.ts). A conflict is retried from the start; so is a
   * connection lost before COMMIT was sent (the server rolled the
   * transaction back, so running it again is safe), a bounded number of
   * times. A connection lost once COMMIT was sent leaves the outcome unknown:
   * that is never retried, it is `unavailable` with reason `commit_uncertain`
   * and the caller must not act as if it committed. A transaction that
   * missed its plan committed nothing, and the program runs again the plain way.
   */
  private transaction<R>(make: () => Program<R>): Promise<R> {
    return this.inTransaction((session, planned) => runTransaction(make, pgOps(session), session, planned));
  }

  private async inTransaction<R>(body: (session: PgSession, planned: boolean) => Promise<R>): Promise<R> {
    let reconnects = 0;
    let planned = true;
    for (let attempt = 1; ; attempt++) {
      const lease = await this.connect();
      const session = new PgSession(lease.client, this.names, TYPES);
      try {
        const result = await body(session, planned);
        await session.commit();
        this.statistics.committed();
        return result;
      } catch (err) {
        const lost = lease.broken() ?? (connectionLost(err) ? err : undefined);
        if (!lost) await session.rollback().catch(() => {});
        lease.release(lost);
        if (lost && session.committing) throw unavailable('database connection lost during commit; the outcome is unknown', { reason: 'commit_uncertain' }, lost);
        if (lost && worthReconnecting(lost) && reconnects++ < MAX_RECONNECTS) {
          await delay(50 * reconnects + Math.random() * 50);
          continue;
        }
        if (!lost && planned && planMissed(err)) {
          planned = false;
          continue;
        }
        // A stale prepared statement ran nothing; its text goes unnamed now (prepared.ts), so the program runs again.
        if (!lost && (CONFLICT_CODES.has(codeOf(err)) || stalePlan(err)) && attempt < MAX_ATTEMPTS) {
          await delay(Math.random() * 5 * attempt);
          continue;
        }
        throw wrap(lost ?? err);
      } finally {
        lease.release();
      }
    }
  }

  /**
   * A checked-out client with an 'error' listener for as long as we hold it:
   * pg emits 'error' on a checked-out client whose connection dies (e.g.
   * pg_terminate_backend, 57P01), and an unhandled 'error' ends the process.
   * A broken client is destroyed on release, never returned to the pool.
   */
  private async connect(): Promise<{ client: pg.PoolClient; broken(): unknown; release(err?: unknown): void }> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw wrap(err);
    }
    let failure: unknown;
    let released = false;
    const onError = (err: unknown) => void (failure ??= err);
    client.on('error', onError);
    return {
      client,
      broken: () => failure,
      release: (err?: unknown) => {
        if (released) return;
        released = true;
        // pg-pool adds its own idle listener on release; ours stays attached to swallow late errors of a destroyed client.
        if (err === undefined && failure === undefined) client.removeListener('error', onError);
        client.release(err === undefined && failure === undefined ? undefined : ((err ?? failure) as Error));
      },
    };
  }

  /** A single statement that may write: run again only when the server said it was not applied. */
  private query<T>(sql: string, params: unknown[]): Promise<T[]> {
    return this.statement<T>(sql, params, sessionEndedBeforeApplying);
  }

  /** A plain read: safe to run again on a fresh connection when the first one was lost (bounded). */
  private read<T>(sql: string, params: unknown[]): Promise<T[]> {
    return this.statement<T>(sql, params, worthReconnecting);
  }

  /** One statement on the pool, run again on a fresh connection (bounded, with backoff) while `retryable` says so. */
  private async statement<T>(sql: string, params: unknown[], retryable: (err: unknown) => boolean): Promise<T[]> {
    let staleRetried = false;
    for (let reconnects = 0; ; ) {
      try {
        return (await this.pool.query(sql, params)).rows as T[];
      } catch (err) {
        // A stale prepared statement ran nothing, and its text goes unnamed now (prepared.ts): once more, at once.
        if (stalePlan(err) && !staleRetried) {
          staleRetried = true;
          continue;
        }
        if (!retryable(err) || reconnects >= MAX_RECONNECTS) throw wrap(err);
        reconnects++;
        await delay(50 * reconnects + Math.random() * 50);
      }
    }
  }

  private async one<T>(sql: string, params: unknown[]): Promise<T | undefined> {
    return (await this.read<T>(sql, params))[0];
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
