/**
 * The primitive reads and writes every store operation is made of. Each
 * domain operation is written once, as a generator that yields these calls
 * (see ./run.ts); the SQLite adapter answers them synchronously inside one
 * BEGIN IMMEDIATE transaction, the PostgreSQL adapter asynchronously inside
 * one BEGIN … COMMIT on one client. So both stores run the same decisions in
 * the same order, and neither needs a transaction that spans an await it
 * cannot hold.
 */
import type { StreamId } from '../../control/scope.ts';
import type { BudgetNode } from '../../ledger/types.ts';

export type Lock = 'none' | 'share' | 'update';

export interface RecordRow {
  record_id: string;
  revision_id: string;
  content_digest: string;
  schema_ref: string;
  prior_revision: string | null;
  document: string;
  stored_at: string;
}

export interface HeadRow {
  project_id: string;
  branch_id: string;
  scope_kind: string;
  position: number;
  event_id: string;
  event_digest: string;
  state: string;
}

export interface EventRow {
  project_id: string;
  branch_id: string;
  position: number;
  event_id: string;
  event_type: string;
  idempotency_key: string | null;
  input_digest: string;
  event_digest: string;
  document: string;
}

/** A budget node as stored: the domain fields, plus bookkeeping, with the issued event as JSON text. */
export interface NodeRow extends Omit<BudgetNode, 'issued_event'> {
  /** The owner preset a root was issued from (its durable issuance counters); null for children and imported roots. */
  preset_id: string | null;
  request_digest: string;
  issued_event: string;
  created_at: string;
}

export interface BalanceRow {
  node_id: string;
  dimension: string;
  unit: string;
  ceiling: bigint;
  consumed: bigint;
  reserved: bigint;
}

export interface ReservationRow {
  reservation_id: string;
  effect_id: string;
  root_id: string;
  owner_namespace: string;
  chain: string;
  kind: string;
  amounts: string;
  charged: string;
  status: string;
  request_digest: string;
  receipt: string;
  settlement: string | null;
  created_at: string;
  settled_at: string | null;
}

export interface EntryRow {
  reservation_id: string;
  node_id: string;
  dimension: string;
  d_consumed: bigint;
  d_reserved: bigint;
  reason: string;
  at: string;
}

/**
 * One admitted effect that must be followed until its verdict (the durable
 * work queue): inserted by the admission, deleted by the verdict, leased by
 * whichever node follows it.
 */
export interface WorkRow {
  effect_id: string;
  /** The delegatee's task id once follow learned it (a long turn's, before its verdict records it on the attempt). */
  remote_task_id?: string | null;
  /** The gateway (actor id) that admitted the turn: only its nodes follow it (work-sql.ts migration 12). */
  gateway_id?: string | null;
  attempt_id: string;
  reservation_id: string;
  lease_owner: string | null;
  lease_until: string;
  tries: number;
  /** After this instant the follower stops waiting and records the effect as unknown. */
  deadline: string;
  created_at: string;
}

/** Synchronous shape of the primitives; the async adapter returns the same values in promises. */
export interface TxOps {
  recordByRevision(revisionId: string): RecordRow | undefined;
  recordHead(recordId: string): string | undefined;
  insertRecord(row: RecordRow): void;
  /** Content stored apart from a record (src/records/detached.ts); a digest already stored is left as it is. */
  insertContent(row: { digest: string; kind: string; document: string; stored_at: string }): void;
  setRecordHead(recordId: string, revisionId: string): void;

  streamHead(stream: StreamId, lock: Lock): HeadRow | undefined;
  eventByIdempotency(stream: StreamId, key: string): EventRow | undefined;
  insertEvent(row: EventRow): void;
  upsertHead(row: HeadRow): void;

  node(nodeId: string, lock: Lock): NodeRow | undefined;
  /** Several nodes in one statement (absent ones left out). */
  nodes(nodeIds: readonly string[], lock: Lock): NodeRow[];
  /** A node and its ancestors, the node first, at most `max`, in one statement; stops where a parent is absent (rows-sql.ts lineageSql). */
  lineage(nodeId: string, max: number, lock: Lock): NodeRow[];
  countDescendants(rootId: string): number;
  countRetained(ownerNamespace: string, at: string): number;
  /**
   * True where one writer holds the whole store for the transaction (SQLite's BEGIN IMMEDIATE): a row
   * read early is what reading it later would return, and the order of reads takes no locks. No SQL.
   */
  serialWriters(): boolean;
  /**
   * Serialises issuance from one preset across processes (a row lock; a no-op where writers are already serial).
   * Carries the preset's limits and the instants its counts are taken at (rootCapacity's `at` and `since`): a
   * store that takes the lock later than asked (PostgreSQL's planned transaction, postgres/transaction.ts) checks
   * them again under it.
   */
  lockPreset(hold: PresetHold): void;
  /**
   * A new root's ADR-0014 capacity (capacity.ts rootCapacitySql): the active roots and retained records
   * of its namespace and, for a preset root, the preset's active roots and its roots issued after `since` — after
   * forgetting the namespace's never-reserved roots that expired by `pruneBefore` (pruneLiveRootsSql),
   * which no count includes. One statement: on SQLite the prune is the root's insert trigger's (capacity.ts PRUNE_ON_ISSUE_SQLITE).
   * With `claims`, the same statement also counts the reservations holding either id (reservationsClaiming's rows).
   */
  rootCapacity(ownerNamespace: string, at: string, pruneBefore: string, preset?: { preset_id: string; since: string }, claims?: Claims): RootCapacity;
  balances(nodeIds: readonly string[], lock: Lock): BalanceRow[];
  addToBalance(nodeId: string, dimension: string, consumed: bigint, reserved: bigint): void;
  /** Lowers a ceiling; never below what is consumed and reserved (the CHECK keeps it so). */
  lowerCeiling(nodeId: string, dimension: string, ceiling: bigint): void;
  reservationByEffect(effectId: string): ReservationRow | undefined;
  /** Reservations holding either id, in one statement: a replayed effect, or a reservation id already used. */
  reservationsClaiming(effectId: string, reservationId: string): ReservationRow[];
  reservation(reservationId: string, lock: Lock): ReservationRow | undefined;
  resolveReservation(reservationId: string, status: string, settlement: string, settledAt: string | null): void;
  /** Resolves a reservation only while it is `held`, in one statement; returns the changed row (undefined: not held, or absent). */
  resolveHeld(reservationId: string, status: string, settlement: string, settledAt: string | null): ReservationRow | undefined;
  insertEntry(row: EntryRow): void;

  // Set-oriented forms (issue #24): one statement for many rows, used by the batch writer (./batch.ts).
  /** The heads of several streams in one statement, sorted by stream; absent streams are left out. */
  streamHeads(streams: readonly StreamId[], lock: Lock): HeadRow[];
  /**
   * What a batch writes at its end, one statement per table in this order
   * (rows-sql.ts batchParts); on PostgreSQL all of it in one statement, each
   * table's write a data-modifying WITH (one round trip, issue #24). A
   * record revision is written, with its head, only where it is its record's
   * plain next revision: on PostgreSQL the check rides in the write, no head
   * is read before it (rows-sql.ts recordParts); on SQLite it rides in a
   * view's trigger (sqlite/appends.ts), and only a batch that view refuses
   * reads its heads first (rows-sql.ts checkedRecordParts).
   */
  writeBatch(writes: BatchWrites): BatchWritten;
  /** New budget nodes (parents before children: the rows' order is kept), then their balances; on PostgreSQL in one statement. */
  insertNodes(nodes: readonly NodeRow[], balances: readonly BalanceRow[]): void;
  /** Adds each delta to its balance row (one delta per node and dimension); throws when a row is missing. */
  addToBalances(deltas: readonly BalanceChange[]): void;
}

/** The ids an admission will claim: its effect's, and its reservation's. */
export interface Claims {
  effect_id: string;
  reservation_id: string;
}

/** Counts of rootCapacity (the preset ones 0 without a preset, `claimed` 0 without claims). */
export interface RootCapacity {
  /** Reservations holding the effect id or the reservation id asked about. */
  claimed: number;
  active_roots: number;
  /** The namespace's retained records (capacity.ts retainedSql) as this statement found them. */
  retained: number;
  preset_active: number;
  preset_issued: number;
}

/** A preset's lock, with what its counts must stay under (TxOps.lockPreset). */
export interface PresetHold {
  preset_id: string;
  at: string;
  since: string;
  max_active_roots: number;
  max_per_minute: number;
}

/** The rows a batch writes at its end (src/store/tx/batch.ts flush). */
export interface BatchWrites {
  /** Budget nodes the batch opened and has not written (parents before children), then their balances, charged already: written first. */
  nodes: readonly NodeRow[];
  balances: readonly BalanceRow[];
  /** At most one revision per record. */
  records: readonly BatchRecord[];
  contents: readonly { digest: string; kind: string; document: string; stored_at: string }[];
  events: readonly EventRow[];
  /** One row per stream. */
  heads: readonly HeadRow[];
  /** New reservations (admissions), written before the entries that name them. */
  reservations: readonly ReservationRow[];
  entries: readonly EntryRow[];
  /** What the entries add to each stored balance row (one change per row; the rows exist before the batch is written). */
  charges: readonly BalanceChange[];
  /** Effects admitted to be followed (their work rows), and effects whose follow-up ends. */
  work: readonly WorkRow[];
  done: readonly string[];
}

/** A record revision as a batch writes it: its row, and the content digest its prior revision ref names. */
export interface BatchRecord extends RecordRow {
  prior_digest: string | null;
}

/** What a batch's write did to records: the revisions it wrote, and the heads it moved (one per revision, unless a head moved under it). */
export interface BatchWritten {
  revisions: string[];
  heads: number;
}

export interface BalanceChange {
  node_id: string;
  dimension: string;
  consumed: bigint;
  reserved: bigint;
}

export type OpName = keyof TxOps;
export interface Call<K extends OpName = OpName> {
  op: K;
  args: Parameters<TxOps[K]>;
}

/** A transaction program: yields primitive calls, receives their results, returns R. */
export type Program<R> = Generator<Call, R, unknown>;

/** Typed yield of one primitive: `const row = yield* tx('node', id, 'update')`. */
export function* tx<K extends OpName>(op: K, ...args: Parameters<TxOps[K]>): Generator<Call, ReturnType<TxOps[K]>, unknown> {
  return (yield { op, args } as Call) as ReturnType<TxOps[K]>;
}
