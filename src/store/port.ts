/**
 * The storage port. It offers domain operations, not a generic transaction:
 * better-sqlite3 transactions are synchronous and cannot span an await, so
 * each adapter makes each operation atomic on its own and shares the pure
 * decision code from the core (src/control, src/ledger).
 */
import type { GaugeReads } from './gauges-sql.ts';
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
  TaskAdmissionRequest,
} from '../ledger/types.ts';
import type { Envelope } from '../records/envelope.ts';
import type { EventRow, RecordRow, WorkRow } from './tx/ops.ts';
import type { MetaStore } from './meta.ts';
import type { ContentStore } from './content-sql.ts';

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
  /** The heads of several streams, read together, keyed by streamKey; a stream with no events has no entry. */
  heads(streams: readonly StreamId[]): Promise<Map<string, StreamHead>>;
  readStream(stream: StreamId, opts?: { after?: number; limit?: number }): Promise<ControlEvent[]>;
  /** The current fence set over `scopes` (authority scopes only). */
  fenceSet(scopes: readonly ControlScopeRef[]): Promise<ControlFenceSet>;
}

/** ADR-0014 shared root budgets and final admission. */
export interface LedgerStore {
  openBudget(req: OpenBudgetRequest): Promise<BudgetNode>;
  admit(req: AdmissionRequest): Promise<AdmissionReceipt>;
  /** Budget nodes and the effect's admission in one transaction; nothing is stored when any check fails. */
  admitTask(req: TaskAdmissionRequest): Promise<AdmissionReceipt>;
  settle(req: SettlementRequest): Promise<Reservation>;
  /** Lowers a node's ceilings (never raises, never below consumed + reserved); returns those in force. */
  narrow(nodeId: string, ceilings: ReadonlyMap<string, bigint>): Promise<Map<string, bigint>>;
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

/**
 * An integrator's webhook for one Baton task (A2A TaskPushNotificationConfig).
 * Credentials are only ever stored sealed (src/push/secret-box.ts).
 */
export interface PushConfigRow {
  /** Baton's task id (the attempt id), never a remote one. */
  task_id: string;
  config_id: string;
  /**
   * The authenticated caller that registered it, kept for audit. Who may
   * read, list or delete a config follows from who owns the task, not
   * from this field.
   */
  caller_id: string;
  url: string;
  /** Sealed JSON `{token?, authentication?}`, or null when the integrator gave none. */
  sealed_credentials: string | null;
  /**
   * When this registration was made; every upsert refreshes it, so it is
   * also the registration's generation, part of each delivery's id.
   */
  created_at: string;
  deleted_at: string | null;
  /** The task record revision last examined for a verified outcome (outbox recovery). */
  seen_revision: string | null;
  /** The gateway (its actor id) that registered it; null on rows from before migration 13 (everyone's). */
  gateway_id: string | null;
}

export type DeliveryStatus = 'pending' | 'delivering' | 'delivered' | 'dead';

/** One notification in the durable outbox; it is signed afresh at every try, so no signature is stored. */
export interface DeliveryRow {
  /** Idempotency id: the same for every retry and duplicate of this notification. */
  delivery_id: string;
  task_id: string;
  config_id: string;
  /** The task record revision whose verified outcome this delivers. */
  revision_id: string;
  /** The exact bytes POSTed, identical at every try. */
  body: string;
  status: DeliveryStatus;
  /** Delivery tries so far (a claim counts as a try). */
  attempts: number;
  next_at: string;
  lease_until: string | null;
  lease_owner: string | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
  /** The gateway (its actor id) that enqueued it, the only one that sends it; null on rows from before migration 13 (everyone's). */
  gateway_id: string | null;
}

/** Push notification state: webhook configs and the outbox. Mutable by design; records stay the audit trail. */
export interface PushStore {
  /** Stores an active config; the same (task_id, config_id) replaces the earlier one (A2A Create is an upsert). */
  putConfig(row: Omit<PushConfigRow, 'deleted_at' | 'seen_revision'>): Promise<void>;
  /** An active config, or undefined (deleted ones are not returned). */
  config(taskId: string, configId: string): Promise<PushConfigRow | undefined>;
  /** A task's active configs, oldest first. */
  configs(taskId: string): Promise<PushConfigRow[]>;
  /** Marks a config deleted (kept for audit); false when there was no active one. */
  deleteConfig(taskId: string, configId: string, at: string): Promise<boolean>;
  /**
   * Active configs of `gateway` (or naming none) whose task's current record
   * revision is not `seen_revision`, oldest registration first, each with
   * that head as read by the same statement.
   */
  changedConfigs(limit: number, gateway: string): Promise<Array<PushConfigRow & { head_revision: string }>>;
  /**
   * Records that `revisionId` of the task was examined for this config.
   * With `generation`, only while the config is still that registration
   * (its `created_at`), so a re-registration made meanwhile stays unseen.
   */
  markSeen(taskId: string, configId: string, revisionId: string, generation?: string): Promise<void>;
  /** Inserts deliveries; an existing delivery id keeps its row untouched. Returns how many were new. */
  enqueue(rows: readonly DeliveryRow[]): Promise<number>;
  /**
   * Atomically claims up to `limit` due deliveries for `owner` until
   * `leaseUntil`: pending ones with next_at <= now, and delivering ones whose
   * lease expired (their owner died). Each claim increments `attempts`.
   * Two concurrent claimers never get the same row. Only deliveries `gateway`
   * enqueued, or naming none, are taken (gateways sharing the store).
   */
  claim(owner: string, now: string, leaseUntil: string, limit: number, gateway: string): Promise<DeliveryRow[]>;
  /** Records a claimed delivery's result, only while `owner` still holds it; false otherwise. */
  finish(
    deliveryId: string,
    owner: string,
    result: { status: 'delivered' | 'pending' | 'dead'; next_at?: string; last_error?: string | null; at: string },
  ): Promise<boolean>;
  delivery(deliveryId: string): Promise<DeliveryRow | undefined>;
  /** Newest first. */
  deliveries(filter: { status?: DeliveryStatus; task_id?: string; limit: number }): Promise<DeliveryRow[]>;
  /** A dead delivery back to pending, due at `at`, tries reset; false when it was not dead or its body was purged. */
  requeue(deliveryId: string, at: string): Promise<boolean>;
  /**
   * Retention (issue 25 item 16): replaces the body of every delivered or
   * dead delivery created before `before` with `purgedBody(purgeRef)`;
   * pending and delivering rows keep their bytes (they are still to be sent
   * identically). Resolves with how many bodies were replaced.
   */
  purgeBodies(before: string, purgeRef: string): Promise<number>;
}

/**
 * Read-only scans for `baton audit verify`: the stored rows exactly as they
 * are, never decoded, so the audit checks the bytes on disk rather than a
 * copy a decoder may have normalised or refused. Every scan is keyset-paged
 * on an index and ordered so that one record's revisions, and one stream's
 * events, arrive together: the verifier then holds one chain at a time. Each
 * row carries its head's columns from the same statement, so a scan running
 * beside a live gateway sees a head and the rows it names consistently.
 */
export interface AuditReads {
  /** Revisions ordered by (record_id, seq), after `after`; each with its record's head (null when it has none). */
  scanRecords(after: AuditRecordCursor | undefined, limit: number): Promise<AuditRecordRow[]>;
  /** Events ordered by (project_id, branch_id, position), after `after`; each with its stream's head columns. */
  scanEvents(after: AuditEventCursor | undefined, limit: number): Promise<AuditEventRow[]>;
  /** record_heads ordered by record_id, after `after`. */
  scanRecordHeads(after: string | undefined, limit: number): Promise<AuditRecordHeadRow[]>;
  /** control_heads ordered by (project_id, branch_id), after `after`. */
  scanControlHeads(after: StreamId | undefined, limit: number): Promise<AuditControlHeadRow[]>;
}

export interface AuditRecordCursor {
  record_id: string;
  seq: bigint;
}

export interface AuditEventCursor extends StreamId {
  position: bigint;
}

/** A `records` row as stored, plus `record_heads.revision_id` of its record. */
export interface AuditRecordRow extends Omit<RecordRow, 'stored_at'> {
  seq: bigint;
  head_revision_id: string | null;
}

/** A `control_events` row as stored, plus its stream's `control_heads` columns. */
export interface AuditEventRow extends Omit<EventRow, 'position'> {
  position: bigint;
  head_position: bigint | null;
  head_event_id: string | null;
  head_event_digest: string | null;
  /** control_heads.state and scope_kind: the projection fences read, which the audit re-folds from the events. */
  head_state: string | null;
  head_scope_kind: string | null;
}

/** A `record_heads` row, with the newest seq among its record's revisions (null when there are none). */
export interface AuditRecordHeadRow {
  record_id: string;
  revision_id: string;
  last_seq: bigint | null;
}

/** A `control_heads` row, with the highest position in its stream (null when the stream has no events). */
export interface AuditControlHeadRow {
  project_id: string;
  branch_id: string;
  position: bigint;
  event_id: string;
  event_digest: string;
  last_position: bigint | null;
}

/**
 * The durable attempt work queue (src/store/work-sql.ts): effects admitted
 * and not yet given a verdict. Rows are inserted by admission and deleted by
 * the verdict's settlement; these operations only lease them.
 */
export interface WorkStore {
  /**
   * Leases up to `limit` of `gateway`'s rows whose lease lapsed at `now` to `owner` until `leaseUntil`; each claim
   * counts a try. Gateways of several organisations may share one store: each follows only its own turns.
   */
  claim(owner: string, now: string, leaseUntil: string, limit: number, gateway: string): Promise<WorkRow[]>;
  /** Extends a lease `owner` still holds; false when it lost it. */
  renew(effectId: string, owner: string, leaseUntil: string): Promise<boolean>;
  /** Gives a lease back, due again at `dueAt`; false when `owner` no longer held it. */
  release(effectId: string, owner: string, dueAt: string): Promise<boolean>;
  /** Claims one row that nobody is following right now (it waits for its next poll), whatever its due time. */
  claimIdle(effectId: string, owner: string, leaseUntil: string): Promise<WorkRow | undefined>;
  /** Records the delegatee's task id on a followed turn's row (once; false when already named or gone). */
  noteRemoteTask(effectId: string, taskId: string): Promise<boolean>;
  /** Removes a row whose reservation was already resolved elsewhere (a verdict normally deletes it with its settlement). */
  done(effectId: string): Promise<void>;
  get(effectId: string): Promise<WorkRow | undefined>;
  ofAttempt(attemptId: string): Promise<WorkRow[]>;
  /** `gateway`'s rows, oldest first. */
  list(limit: number, gateway: string): Promise<WorkRow[]>;
}

export interface Store extends RecordStore {
  readonly control: ControlStore;
  readonly ledger: LedgerStore;
  readonly work: WorkStore;
  readonly push: PushStore;
  readonly audit: AuditReads;
  /** Message and task-view content kept apart from the records, purgeable by retention (content-sql.ts). */
  readonly content: ContentStore;
  readonly meta: MetaStore;
  /** Read-only aggregates for the metrics endpoint (src/store/gauges-sql.ts). */
  readonly gauges: GaugeReads;
  /** Cheap liveness probe for /readyz; throws storage_error when the store is unusable. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
