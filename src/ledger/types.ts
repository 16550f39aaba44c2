/** Requests and receipts of the ledger's domain operations (see src/store/port.ts). */
import type { ComposedEvent } from '../control/append.ts';
import type { ControlEventInput } from '../control/event.ts';
import type { ControlBoundaryRef } from '../control/fence.ts';
import type { ControlScopeRef } from '../control/scope.ts';
import type { Envelope } from '../records/envelope.ts';
import type { ActorRef, RevisionRef } from '../records/revision-ref.ts';
import type { BudgetDimension } from './amount.ts';
import type { ChargeKind, ReservationStatus, SettlementOutcome } from './rules.ts';

/** Ledger capacity bounds; owner configuration may tighten them. */
export interface LedgerLimits {
  maxActiveRoots: number;
  maxRetainedRecords: number;
  maxDepth: number;
  maxDescendants: number;
}

/** ADR-0014 defaults: 1,024 active roots and 10,000 retained records per owner namespace; 4 hops, 32 descendants per root. */
export const LEDGER_LIMITS: Readonly<LedgerLimits> = Object.freeze({
  maxActiveRoots: 1024,
  maxRetainedRecords: 10_000,
  maxDepth: 4,
  maxDescendants: 32,
});

/**
 * How long after it expired a never-reserved root leaves the live-root table
 * (store/capacity.ts pruneLiveRootsSql; the horizon is the issuing time less
 * this): the margin keeps a process whose clock runs a little behind counting
 * a root exactly as the rule says.
 */
export const LIVE_ROOT_PRUNE_MARGIN_S = 60;

/**
 * Registers one delegation's budget node. Atomic with storing the contract
 * record and appending rw003.delegation.issued to its stream (ADR-0014: a
 * delegation record and its budget commit together).
 */
export interface OpenBudgetRequest {
  node_id: string;
  /** Absent for a root. The parent must exist and be active. */
  parent_id?: string;
  space_id: string;
  owner_namespace: string;
  not_after: string;
  dimensions: BudgetDimension[];
  actor_ref: ActorRef;
  /** The sealed contract record this node accounts for. */
  record?: Envelope;
  /** A root issued from an owner preset: its limits are checked against the store's durable counters (ADR-0014). */
  preset?: PresetIssuance;
  at: string;
  /** The id of the node's issued event, fixed by the admission's plan so its head is known before the transaction (plan.ts). */
  issued_event_id?: string;
  /**
   * That event as the plan composed it, at the place it planned the node: the
   * transaction appends it as it is where the node is placed there and its
   * stream is still new (open.ts), and composes it again otherwise.
   */
  planned_issue?: { placed: { root_id: string; depth: number }; composed: ComposedEvent };
}

/** ADR-0014 "Machine callers": how many live roots one preset may hold, and how many it may issue per minute. */
export interface PresetIssuance {
  preset_id: string;
  max_active_roots: number;
  max_per_minute: number;
}

/** The follow-up an admitted effect needs until its verdict: a work-queue row leased to the admitting node. */
export interface FollowUp {
  attempt_id: string;
  lease_owner: string;
  lease_until: string;
  /** When the follower stops waiting for the remote and records the effect as unknown. */
  deadline: string;
  /** The admitting gateway's actor id: only its nodes follow the turn (gateways may share a store). */
  gateway_id?: string;
}

/**
 * A task's whole admission in one transaction (ADR-0014: a delegation record
 * and its budget commit together; a refused admission leaves nothing live):
 * the contracts' budget nodes (a preset root, imported upstream ones, the
 * minted child; existing ones are found idempotently), then the effect's
 * admission — a value built before the transaction, over a fence set that
 * already holds the heads the new nodes' streams will have (plan.ts).
 */
export interface TaskAdmissionRequest {
  budgets: OpenBudgetRequest[];
  admission: AdmissionRequest;
}

export interface BudgetNode {
  node_id: string;
  parent_id: string | null;
  root_id: string;
  depth: number;
  space_id: string;
  owner_namespace: string;
  not_after: string;
  issued_event: ControlBoundaryRef;
}

/**
 * One counted operation or controlled effect (ADR-0014). Everything is
 * checked and written in one durable transaction before dispatch.
 */
export interface AdmissionRequest {
  effect_id: string;
  reservation_id: string;
  /** The leaf delegation; its ancestry comes from the store, never the caller. */
  node_id: string;
  kind: ChargeKind;
  amounts: Record<string, bigint>;
  fence_set: ControlBoundaryRef[];
  /** Authority scopes beyond the delegation chain (space policy, agent card, consent…). */
  scopes: ControlScopeRef[];
  /** The PermissionDecision record this admission binds. */
  decision: Envelope;
  /** The attempt audit stream the permission observation goes to. */
  attempt_scope: ControlScopeRef;
  actor_ref: ActorRef;
  at: string;
  /** Records to commit in the same transaction (e.g. the ExecutionAttempt this effect starts). */
  records?: Envelope[];
  /** Audit events to append in the same transaction (attempt streams; never an authority stream). */
  events?: ControlEventInput[];
  /** The durable follow-up this effect needs until its verdict. */
  follow?: FollowUp;
}

export interface AdmissionReceipt {
  effect_id: string;
  reservation_id: string;
  chain: string[];
  kind: ChargeKind;
  amounts: Record<string, string>;
  status: ReservationStatus;
  fence_set: ControlBoundaryRef[];
  decision_ref: RevisionRef;
  /** True when this call found the identical admission already recorded. */
  replayed: boolean;
}

export interface SettlementRequest {
  reservation_id: string;
  outcome: SettlementOutcome;
  /** Evidence for the outcome (receipt, reconciliation record); required to leave `unknown`. */
  evidence?: RevisionRef;
  at: string;
  /** Records committed in the same transaction, even when the settlement itself is a no-op replay. */
  records?: Envelope[];
  /** Audit events appended in the same transaction (attempt streams only). */
  events?: ControlEventInput[];
  /** The effect whose follow-up this verdict ends (its work-queue row is deleted in the same transaction). */
  ends_follow?: string;
  /**
   * Settle only a reservation still `held` (a verdict planned on what its own
   * admission left, without reading the reservation first: issue #24). Any
   * other state is another writer's resolution: refused as `invalid_request`
   * with `conflict: 'not_held'`, and nothing of this request is written.
   */
  held_only?: boolean;
  /**
   * Settle only while these fences still hold: a verdict that projected its
   * outcome with the fences current, without reading them first (issue #24),
   * has them checked in its own transaction (RW-003 §1.2: a racing control
   * change is never treated as authorized success). If one moved: refused as
   * `context_invalidated` with `conflict: 'fences_moved'`, nothing written.
   */
  fences?: { fence_set: ControlBoundaryRef[]; scopes: ControlScopeRef[] };
}

export interface Reservation {
  reservation_id: string;
  effect_id: string;
  root_id: string;
  chain: string[];
  kind: ChargeKind;
  amounts: Record<string, string>;
  status: ReservationStatus;
  /** The PermissionDecision record the admission bound. */
  decision_ref: RevisionRef;
  created_at: string;
  settled_at: string | null;
}

export interface LedgerTreeNode {
  node_id: string;
  depth: number;
  not_after: string;
  balances: Array<{ dimension: string; ceiling: string; consumed: string; reserved: string }>;
  children: LedgerTreeNode[];
}
