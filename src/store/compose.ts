/**
 * Builds the control and ledger halves of a Store from an adapter's two
 * capabilities: running a transaction program atomically, and a handful of
 * plain reads. Both adapters share this, so they differ only in SQL.
 */
import { ControlEvent } from '../control/event.ts';
import { fenceSetOf, type StreamHead } from '../control/fence.ts';
import { isAuthorityScope, streamKey, streamOf, type StreamId } from '../control/scope.ts';
import type { LedgerLimits } from '../ledger/types.ts';
import type { IdSource } from '../records/ids.ts';
import type { ControlStore, LedgerStore } from './port.ts';
import { appendControl, headOf, parseEventInput } from '../control/append.ts';
import { admit, admitTask, narrow, nodeOf, openBudget, reservationOf, settle } from '../ledger/programs.ts';
import { prepareAdmission, prepareSettlement, prepareTask, type Prepared } from '../ledger/prepare.ts';
import type { HeadRow, NodeRow, Program, ReservationRow } from './tx/ops.ts';
import { buildTree, type TreeRow } from './tree.ts';
import { checkedRow, HeadRowSchema, NodeRowSchema, ReservationRowSchema } from './tx/rows.ts';

/** Runs a fresh program from `make` atomically; an adapter may call `make` again to retry. */
export type RunProgram = <R>(make: () => Program<R>) => Promise<R>;

export interface StoreReads {
  head(stream: StreamId): Promise<HeadRow | undefined>;
  /** The heads of several streams read together (one statement where the dialect allows); absent streams are left out. */
  heads(streams: readonly StreamId[]): Promise<HeadRow[]>;
  events(stream: StreamId, after: number, limit: number): Promise<string[]>;
  node(nodeId: string): Promise<NodeRow | undefined>;
  reservation(reservationId: string): Promise<ReservationRow | undefined>;
  unresolved(limit: number): Promise<ReservationRow[]>;
  treeRows(rootId: string): Promise<TreeRow[]>;
  balanceAudit(rootId: string): Promise<BalanceAuditRow[]>;
}

export interface BalanceAuditRow {
  node_id: string;
  dimension: string;
  consumed: bigint | string;
  reserved: bigint | string;
  entries_consumed: bigint | string;
  entries_reserved: bigint | string;
}

/** Same SQL in both dialects; `param` is the placeholder for the root id. */
export const balanceAuditSql = (param: string) => `
  SELECT b.node_id, b.dimension, b.consumed, b.reserved,
    coalesce((SELECT sum(e.d_consumed) FROM ledger_entries e WHERE e.node_id = b.node_id AND e.dimension = b.dimension), 0) AS entries_consumed,
    coalesce((SELECT sum(e.d_reserved) FROM ledger_entries e WHERE e.node_id = b.node_id AND e.dimension = b.dimension), 0) AS entries_reserved
  FROM ledger_balances b JOIN ledger_nodes n ON n.node_id = b.node_id WHERE n.root_id = ${param} ORDER BY b.node_id, b.dimension`;

const now = () => new Date().toISOString();

export function composeControl(run: RunProgram, reads: StoreReads, ids: IdSource): ControlStore {
  const head = async (s: StreamId): Promise<StreamHead | undefined> => {
    const row = await reads.head(s);
    return row && headOf(checkedRow(HeadRowSchema, row, 'head'));
  };
  const heads = async (streams: readonly StreamId[]) => (await reads.heads(streams)).map((row) => headOf(checkedRow(HeadRowSchema, row, 'heads')));
  return {
    appendControl: async (input, opts) => {
      const parsed = parseEventInput(input);
      const at = opts?.at ?? now();
      return run(() => appendControl(parsed, { ...{}, ...opts, at }, ids));
    },
    head: (scope) => head(streamOf(scope)),
    streamHead: (stream) => head(stream),
    readStream: async (s, opts) =>
      (await reads.events(s, opts?.after ?? 0, Math.min(opts?.limit ?? 1000, 10_000))).map((doc) => ControlEvent.parse(JSON.parse(doc))),
    heads: async (streams) => new Map((await heads(streams)).map((h) => [streamKey(h), h])),
    fenceSet: async (scopes) => {
      const current = await heads(scopes.filter(isAuthorityScope).map(streamOf));
      return fenceSetOf(current.map((h) => ({ project_id: h.project_id, branch_id: h.branch_id, position: h.position, event_id: h.event_id, event_digest: h.event_digest })));
    },
  };
}

/**
 * The head this process last committed to each audit stream, by streamKey:
 * what a ledger operation's events are composed on before its transaction
 * (ledger/prepare.ts). Only ever a guess, never authority: the transaction
 * checks it is still the head (another node may have appended since) and
 * composes the events again where it is not. Bounded, oldest forgotten first.
 */
export class LastHeads {
  private readonly heads = new Map<string, HeadRow>();
  constructor(private readonly max = 4096) {}

  readonly expected = (stream: StreamId): HeadRow | undefined => this.heads.get(streamKey(stream));

  /** After a ledger operation committed: the head its planned events leave (where it composed them again, a guess that will miss). */
  committed(prep: Prepared): void {
    const last = prep.events?.composed.at(-1)?.headRow;
    if (!last) return;
    const key = streamKey(last);
    this.heads.delete(key);
    this.heads.set(key, last);
    if (this.heads.size > this.max) this.heads.delete(this.heads.keys().next().value!);
  }
}

export function composeLedger(run: RunProgram, reads: StoreReads, ids: IdSource, limits: LedgerLimits): LedgerStore {
  // Digests and audit events are prepared here, before the program is queued: nothing is hashed under the lock (DESIGN).
  const last = new LastHeads();
  const prepared = async <R>(prep: Prepared, program: (prep: Prepared) => Program<R>): Promise<R> => {
    const result = await run(() => program(prep));
    last.committed(prep);
    return result;
  };
  return {
    openBudget: async (req) => run(() => openBudget(req, ids, limits)),
    admit: async (req) => prepared(prepareAdmission(req, last.expected, ids), (prep) => admit(req, ids, limits, prep)),
    admitTask: async (req) => prepared(prepareTask(req, last.expected, ids), (prep) => admitTask(req, ids, limits, prep)),
    settle: async (req) => prepared(prepareSettlement(req, last.expected, ids), (prep) => settle(req, ids, prep)),
    narrow: async (nodeId, ceilings) => run(() => narrow(nodeId, ceilings)),
    node: async (id) => {
      const row = await reads.node(id);
      return row && nodeOf(checkedRow(NodeRowSchema, row, 'node'));
    },
    reservation: async (id) => {
      const row = await reads.reservation(id);
      return row && reservationOf(checkedRow(ReservationRowSchema, row, 'reservation'));
    },
    tree: async (rootId) => buildTree(rootId, await reads.treeRows(rootId)),
    unresolved: async (limit = 100) => (await reads.unresolved(limit)).map((row) => reservationOf(checkedRow(ReservationRowSchema, row, 'unresolved'))),
    balanceAudit: async (rootId) =>
      (await reads.balanceAudit(rootId)).map((r) => {
        const [c, rs, ec, er] = [r.consumed, r.reserved, r.entries_consumed, r.entries_reserved].map((v) => BigInt(v));
        return { node_id: r.node_id, dimension: r.dimension, consumed: c!, reserved: rs!, entries_consumed: ec!, entries_reserved: er!, consistent: c === ec && rs === er };
      }),
  };
}
