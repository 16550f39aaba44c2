/**
 * The storage port. It offers domain operations, not a generic transaction:
 * better-sqlite3 transactions are synchronous and cannot span an await, so
 * each adapter makes each operation atomic on its own and shares the pure
 * decision code from the core (src/control, src/ledger).
 */
import type { ControlEvent, ControlEventInput } from '../control/event.ts';
import type { ControlFenceSet, StreamHead } from '../control/fence.ts';
import type { ControlScopeRef, StreamId } from '../control/scope.ts';
import type {
  AdmissionReceipt,
  AdmissionRequest,
  BudgetNode,
  LedgerTreeNode,
  OpenBudgetRequest,
  Reservation,
  SettlementRequest,
} from '../ledger/types.ts';
import type { Envelope } from '../records/envelope.ts';

export type PutResult = 'inserted' | 'exists';

/** Append-only, content-addressed record storage (RW-003 §1: every record is immutable). */
export interface RecordStore {
  /**
   * Stores one sealed revision. Re-storing the identical revision is a no-op
   * ('exists'); a different record under the same revision id, or a later
   * revision that does not name the current head as its prior, is invalid_request.
   */
  putRecord(record: Envelope): Promise<PutResult>;
  /** The newest revision of `recordId`, or the exact one when `revisionId` is given. */
  getRecord(recordId: string, revisionId?: string): Promise<Envelope | undefined>;
  /** The revision whose content digest is `digest`. */
  getByDigest(digest: string): Promise<Envelope | undefined>;
  /** Every revision of `recordId`, oldest first. */
  listRevisions(recordId: string): Promise<Envelope[]>;
  /**
   * Current revisions of records of one schema, newest first, a page at a
   * time; pass the returned cursor to continue.
   */
  listCurrent(schemaRef: string, opts: { limit: number; cursor?: string }): Promise<{ records: Envelope[]; cursor?: string }>;
}

/** RW-003 §1.2 control streams. */
export interface ControlStore {
  /**
   * Appends at the stream's next position. With `expectedHead`, fails with
   * context_invalidated if the head moved. The same idempotency key with the
   * same content returns the first event; with other content, invalid_request.
   */
  appendControl(input: ControlEventInput, opts?: { expectedHead?: { position: number; event_id: string }; at: string }): Promise<ControlEvent>;
  head(scope: ControlScopeRef): Promise<StreamHead | undefined>;
  /** The head of a stream by its exact address (e.g. one named in a fence set). */
  streamHead(stream: StreamId): Promise<StreamHead | undefined>;
  readStream(stream: StreamId, opts?: { after?: number; limit?: number }): Promise<ControlEvent[]>;
  /** The current fence set over `scopes` (authority scopes only). */
  fenceSet(scopes: readonly ControlScopeRef[]): Promise<ControlFenceSet>;
}

/** ADR-0014 shared root budgets and final admission. */
export interface LedgerStore {
  openBudget(req: OpenBudgetRequest): Promise<BudgetNode>;
  admit(req: AdmissionRequest): Promise<AdmissionReceipt>;
  settle(req: SettlementRequest): Promise<Reservation>;
  node(nodeId: string): Promise<BudgetNode | undefined>;
  reservation(reservationId: string): Promise<Reservation | undefined>;
  tree(rootId: string): Promise<LedgerTreeNode | undefined>;
  /** Reservations not yet resolved (held or unknown), oldest first: the reconciliation queue. */
  unresolved(limit?: number): Promise<Reservation[]>;
  /** Every balance of a root's tree beside the sum of its journal entries; they must agree. */
  balanceAudit(rootId: string): Promise<BalanceAudit[]>;
}

export interface BalanceAudit {
  node_id: string;
  dimension: string;
  consumed: bigint;
  reserved: bigint;
  entries_consumed: bigint;
  entries_reserved: bigint;
  consistent: boolean;
}

export interface Store extends RecordStore {
  readonly control: ControlStore;
  readonly ledger: LedgerStore;
  /** Cheap liveness probe for /readyz; throws storage_error when the store is unusable. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
