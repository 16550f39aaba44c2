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
      return run(() => appendControl(parsed, { ...opts, at }, ids));
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

export function composeLedger(run: RunProgram, reads: StoreReads, ids: IdSource, limits: LedgerLimits): LedgerStore {
  return {
    openBudget: async (req) => run(() => openBudget(req, ids, limits)),
    admit: async (req) => run(() => admit(req, ids, limits)),
    admitTask: async (req) => run(() => admitTask(req, ids, limits)),
    settle: async (req) => run(() => settle(req, ids)),
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
