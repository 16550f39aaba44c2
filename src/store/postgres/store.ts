/**
 * The PostgreSQL adapter: several Baton processes behind a load balancer
 * share one database. One pooled client per transaction; conflicts that
 * PostgreSQL resolves by aborting (serialization 40001, deadlock 40P01, a
 * racing insert of the same new head 23505) are retried from the start, so
 * the program re-reads everything it decided on.
 */
import pg from 'pg';
import { invalidRequest, storageError, unavailable } from '../../errors.ts';
import { LEDGER_LIMITS, type LedgerLimits } from '../../ledger/types.ts';
import type { Envelope } from '../../records/envelope.ts';
import { randomIds, type IdSource } from '../../records/ids.ts';
import { balanceAuditSql, composeControl, composeLedger, type BalanceAuditRow, type StoreReads } from '../compose.ts';
import { decodeRecord, type RecordDocRow } from '../decode.ts';
import { composeAudit } from '../audit-sql.ts';
import type { AuditReads, ControlStore, LedgerStore, PushStore, PutResult, Store, WorkStore } from '../port.ts';
import { composeWork } from '../work-sql.ts';
import type { HeadRow, NodeRow, Program, ReservationRow } from '../programs/ops.ts';
import { putRecord } from '../programs/records.ts';
import { runAsync } from '../programs/run.ts';
import type { TreeRow } from '../tree.ts';
import { pgOps } from './ops.ts';
import { pgDialect, pgPush } from './push.ts';
import { PG_MIGRATIONS } from './schema.ts';

const RETRYABLE = new Set(['40001', '40P01', '23505']);
const MAX_ATTEMPTS = 25;

export interface PgStoreOptions {
  ids?: IdSource;
  limits?: LedgerLimits;
  /** Pool size per process. */
  max?: number;
}

export class PgStore implements Store {
  readonly control: ControlStore;
  readonly ledger: LedgerStore;
  readonly push: PushStore;
  readonly work: WorkStore;
  readonly audit: AuditReads;

  private constructor(
    private readonly pool: pg.Pool,
    ids: IdSource,
    limits: LedgerLimits,
  ) {
    const run = <R>(make: () => Program<R>) => this.transaction(make);
    const reads: StoreReads = {
      head: (s) => this.one<HeadRow>('SELECT * FROM control_heads WHERE project_id = $1 AND branch_id = $2', [s.project_id, s.branch_id]),
      events: async (s, after, limit) =>
        (await this.query<{ document: string }>(
          'SELECT document FROM control_events WHERE project_id = $1 AND branch_id = $2 AND position > $3 ORDER BY position LIMIT $4',
          [s.project_id, s.branch_id, after, limit],
        )).map((r) => r.document),
      node: (id) => this.one<NodeRow>('SELECT * FROM ledger_nodes WHERE node_id = $1', [id]),
      reservation: (id) => this.one<ReservationRow>('SELECT * FROM ledger_reservations WHERE reservation_id = $1', [id]),
      unresolved: (limit) =>
        this.query<ReservationRow>("SELECT * FROM ledger_reservations WHERE status IN ('held', 'unknown') ORDER BY created_at, reservation_id LIMIT $1", [limit]),
      treeRows: (root) =>
        this.query<TreeRow>(
          `SELECT n.node_id, n.parent_id, n.depth, n.not_after, b.dimension, b.ceiling, b.consumed, b.reserved
           FROM ledger_nodes n LEFT JOIN ledger_balances b ON b.node_id = n.node_id WHERE n.root_id = $1 ORDER BY n.depth, n.node_id, b.dimension`,
          [root],
        ),
      balanceAudit: (root) => this.query<BalanceAuditRow>(balanceAuditSql('$1'), [root]),
    };
    this.control = composeControl(run, reads, ids);
    this.ledger = composeLedger(run, reads, ids, limits);
    this.push = pgPush((sql, params) => this.query(sql, params));
    this.work = composeWork(pgDialect((sql, params) => this.query(sql, params)));
    this.audit = composeAudit({ p: (n) => `$${n}`, all: (sql, params) => this.query(sql, [...params]) });
  }

  /** Connects, migrates (once, under an advisory lock) and returns the store. */
  static async open(url: string, opts: PgStoreOptions = {}): Promise<PgStore> {
    const pool = new pg.Pool({
      connectionString: url,
      max: opts.max ?? 10,
      connectionTimeoutMillis: 5_000,
      // int8 as BigInt: budgets never pass through a lossy number.
      types: { getTypeParser: (oid: number, format?: string) => (oid === 20 ? BigInt : pg.types.getTypeParser(oid, format as 'text')) } as pg.CustomTypesConfig,
    });
    pool.on('error', () => {}); // idle-client errors surface on the next query instead of crashing the process
    const store = new PgStore(pool, opts.ids ?? randomIds, opts.limits ?? LEDGER_LIMITS);
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

  async getByDigest(digest: string): Promise<Envelope | undefined> {
    const row = await this.one<RecordDocRow>('SELECT * FROM records WHERE content_digest = $1', [digest]);
    return row && decodeRecord(row);
  }

  async listRevisions(recordId: string): Promise<Envelope[]> {
    return (await this.query<RecordDocRow>('SELECT * FROM records WHERE record_id = $1 ORDER BY seq', [recordId])).map(decodeRecord);
  }

  async listCurrent(schemaRef: string, opts: { limit: number; cursor?: string }): Promise<{ records: Envelope[]; cursor?: string }> {
    if (opts.cursor !== undefined && !/^\d{1,19}$/.test(opts.cursor)) throw invalidRequest('bad page cursor');
    const limit = Math.min(Math.max(opts.limit, 1), 1000);
    const rows = await this.query<RecordDocRow & { seq: bigint }>(
      'SELECT r.* FROM record_heads h JOIN records r ON r.revision_id = h.revision_id WHERE r.schema_ref = $1 AND r.seq < $2 ORDER BY r.seq DESC LIMIT $3',
      [schemaRef, opts.cursor ?? String(1n << 62n), limit],
    );
    const last = rows[rows.length - 1];
    return { records: rows.map(decodeRecord), ...(rows.length === limit && last ? { cursor: String(last.seq) } : {}) };
  }

  async ping(): Promise<void> {
    await this.query('SELECT 1', []);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async migrate(): Promise<void> {
    const client = await this.connect();
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
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw wrap(err);
    } finally {
      client.release();
    }
  }

  private async transaction<R>(make: () => Program<R>): Promise<R> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.connect();
      try {
        await client.query('BEGIN');
        const result = await runAsync(make(), pgOps(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        const code = (err as { code?: string }).code;
        if (code && RETRYABLE.has(code) && attempt < MAX_ATTEMPTS) {
          await new Promise((r) => setTimeout(r, Math.random() * 5 * attempt));
          continue;
        }
        throw wrap(err);
      } finally {
        client.release();
      }
    }
  }

  private async connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (err) {
      throw wrap(err);
    }
  }

  private async query<T>(sql: string, params: unknown[]): Promise<T[]> {
    try {
      return (await this.pool.query(sql, params)).rows as T[];
    } catch (err) {
      throw wrap(err);
    }
  }

  private async one<T>(sql: string, params: unknown[]): Promise<T | undefined> {
    return (await this.query<T>(sql, params))[0];
  }
}

/** Our errors pass through; an unreachable server is unavailable; anything else is storage_error. */
function wrap(err: unknown): Error {
  if (err instanceof Error && err.name === 'BatonError') return err;
  const code = (err as { code?: string }).code ?? '';
  if (code.startsWith('08') || code === 'ECONNREFUSED' || code === '57P03' || /timeout|terminated/i.test(String((err as Error).message))) {
    return unavailable('database is unreachable', { reason: code || 'connect' }, err);
  }
  return storageError('database operation failed', { reason: code || 'unknown' }, err);
}
