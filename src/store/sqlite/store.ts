/** The SQLite adapter of the storage port: the embedded default. */
import { ControlEvent } from '../../control/event.ts';
import { fenceSetOf, type StreamHead } from '../../control/fence.ts';
import { isAuthorityScope, streamOf, type ControlScopeRef, type StreamId } from '../../control/scope.ts';
import { storageError } from '../../errors.ts';
import { LEDGER_LIMITS, type LedgerLimits, type LedgerTreeNode } from '../../ledger/types.ts';
import type { Envelope } from '../../records/envelope.ts';
import { randomIds, type IdSource } from '../../records/ids.ts';
import type { ControlStore, LedgerStore, PutResult, Store } from '../port.ts';
import { appendControl, headOf, parseEventInput } from '../programs/control.ts';
import { admit, openBudget, reservationOf, settle } from '../programs/ledger.ts';
import type { Program, ReservationRow } from '../programs/ops.ts';
import { putRecord } from '../programs/records.ts';
import { runSync } from '../programs/run.ts';
import { immediate, openDatabase, type Db, type OpenOptions } from './database.ts';
import { sqliteOps } from './ops.ts';
import { recordReads } from './records.ts';
import { buildTree, type TreeRow } from '../tree.ts';

export interface SqliteStoreOptions extends OpenOptions {
  ids?: IdSource;
  limits?: LedgerLimits;
}

export class SqliteStore implements Store {
  readonly control: ControlStore;
  readonly ledger: LedgerStore;
  private readonly reads;
  private readonly ops;

  private constructor(
    private readonly db: Db,
    ids: IdSource,
    limits: LedgerLimits,
  ) {
    this.ops = sqliteOps(db);
    this.reads = recordReads(db);
    const run = <R>(program: Program<R>): R => this.guard(() => immediate(db, () => runSync(program, this.ops)));
    const at = () => new Date().toISOString();
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
    const head = (s: StreamId): StreamHead | undefined => {
      const row = this.ops.streamHead(s, 'none');
      return row && headOf(row);
    };
    this.control = {
      appendControl: async (input, opts) => run(appendControl(parseEventInput(input), { ...opts, at: opts?.at ?? at() }, ids)),
      head: async (scope: ControlScopeRef) => head(streamOf(scope)),
      readStream: async (s, opts) =>
        events.all(s.project_id, s.branch_id, opts?.after ?? 0, opts?.limit ?? 1000).map((r) => ControlEvent.parse(JSON.parse(r.document))),
      fenceSet: async (scopes) =>
        fenceSetOf(
          scopes.filter(isAuthorityScope).flatMap((sc) => {
            const h = head(streamOf(sc));
            return h ? [{ project_id: h.project_id, branch_id: h.branch_id, position: h.position, event_id: h.event_id, event_digest: h.event_digest }] : [];
          }),
        ),
    };
    this.ledger = {
      openBudget: async (req) => run(openBudget(req, ids, limits)),
      admit: async (req) => run(admit(req, ids)),
      settle: async (req) => run(settle(req)),
      node: async (id) => {
        const row = this.ops.node(id, 'none');
        return row && { ...row, issued_event: JSON.parse(row.issued_event) };
      },
      reservation: async (id) => {
        const row = this.ops.reservation(id, 'none');
        return row && reservationOf(row);
      },
      tree: async (rootId): Promise<LedgerTreeNode | undefined> => buildTree(rootId, treeRows.all(rootId)),
      unresolved: async (limit = 100) => unresolved.all(limit).map(reservationOf),
    };
  }

  static open(path: string, opts: SqliteStoreOptions = {}): SqliteStore {
    return new SqliteStore(openDatabase(path, opts), opts.ids ?? randomIds, opts.limits ?? LEDGER_LIMITS);
  }

  /** The underlying handle, for tests and diagnostics. */
  get handle(): Db {
    return this.db;
  }

  async putRecord(record: Envelope): Promise<PutResult> {
    return this.guard(() => immediate(this.db, () => runSync(putRecord(record, new Date().toISOString()), this.ops)));
  }

  async getRecord(recordId: string, revisionId?: string): Promise<Envelope | undefined> {
    return this.guard(() => this.reads.get(recordId, revisionId));
  }

  async getByDigest(digest: string): Promise<Envelope | undefined> {
    return this.guard(() => this.reads.byDigest(digest));
  }

  async listRevisions(recordId: string): Promise<Envelope[]> {
    return this.guard(() => this.reads.revisions(recordId));
  }

  async ping(): Promise<void> {
    this.guard(() => this.db.prepare('SELECT 1').get());
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  /** SQLite's own errors (busy, I/O, closed, constraint) become storage_error; ours pass through. */
  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      if (err instanceof Error && err.name === 'BatonError') throw err;
      throw storageError('database operation failed', { reason: (err as { code?: string }).code ?? 'unknown' }, err);
    }
  }
}
