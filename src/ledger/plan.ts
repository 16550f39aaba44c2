/**
 * A task's admission planned before its transaction (issue #24 item 1,
 * DESIGN "A turn is a pure plan, then one commit"). The heads the
 * transaction gives the delegation streams it opens are deterministic: each
 * new node's stream starts with its rw003.delegation.issued event, and that
 * event is composed here from the same input, time and event id the
 * transaction would compose it from; the transaction appends the event
 * composed here (open.ts). So the fence set — and every record that binds it
 * (the PermissionDecision, the attempt) — is complete before BEGIN, and
 * nothing is sealed, digested or signed under the lock.
 *
 * Should a stream planned as new not be new after all (another transaction
 * opened the node, or appended to its stream, first), its head differs from
 * the one planned and the admission refuses the fence as stale (RW-003 §1.2,
 * programs.ts assertFences): nothing is written. Pure: no I/O.
 */
import { composeEvent, inputTexts, ownEventInput, type ComposedEvent } from '../control/append.ts';
import { boundaryOf, type ParsedEventInput } from '../control/event.ts';
import { fenceSetOf, type ControlBoundaryRef } from '../control/fence.ts';
import { streamKey, streamOf, type ControlScopeRef } from '../control/scope.ts';
import { frozenCopy } from '../records/canonical.ts';
import { refOf } from '../records/envelope.ts';
import type { IdSource } from '../records/ids.ts';
import type { OpenBudgetRequest } from './types.ts';

/** Where a node sits in its root's tree: what its issued event records. */
export interface Placement {
  root_id: string;
  depth: number;
}

export const delegationScope = (space_id: string, node_id: string): ControlScopeRef => ({ space_id, scope_kind: 'delegation', scope_id: node_id });

/** The rw003.delegation.issued event that opens a node's stream (written by open.ts, planned by {@link planOpens}). */
export function issuedEventInput(req: OpenBudgetRequest, placed: Placement): ParsedEventInput {
  return ownEventInput({
    event_type: 'rw003.delegation.issued',
    control_scope_ref: delegationScope(req.space_id, req.node_id),
    actor_ref: req.actor_ref,
    produced_records: req.record ? [refOf(req.record)] : [],
    idempotency_key: `issue:${req.node_id}`,
    payload: { parent_id: req.parent_id ?? null, root_id: placed.root_id, depth: placed.depth },
  });
}

/** A new node's issued event as its stream's first, composed once: the transaction appends it as it is (open.ts). */
function plannedIssue(req: OpenBudgetRequest & { issued_event_id: string }, placed: Placement): ComposedEvent {
  const parsed = issuedEventInput(req, placed);
  const { members, inputDigest } = inputTexts(parsed);
  return composeEvent(parsed, members, inputDigest, undefined, req.at, { next: () => req.issued_event_id });
}

export interface PlannedOpens {
  /** The budgets, those planned as new with the id their issued event will carry. */
  budgets: OpenBudgetRequest[];
  /** `fence` completed with the head each new node's stream will have. */
  fence_set: ControlBoundaryRef[];
}

/**
 * Plans the nodes a task's admission opens. A budget whose stream already has
 * a head in `fence` exists; any other is planned as new. A new child's place
 * comes from its parent: one planned here, or one of `parents` (read by the
 * caller). A child whose parent is neither gets no planned head: the
 * admission then refuses it as unfenced, as it would an unknown parent.
 */
export function planOpens(budgets: readonly OpenBudgetRequest[], fence: readonly ControlBoundaryRef[], ids: IdSource, parents: ReadonlyMap<string, Placement> = new Map()): PlannedOpens {
  const isNew = newIn(fence);
  const placed = new Map(parents);
  const heads: ControlBoundaryRef[] = [];
  const planned = budgets.map((b) => {
    if (!isNew(b)) return b;
    const parent = b.parent_id === undefined ? undefined : placed.get(b.parent_id);
    const place = b.parent_id === undefined ? { root_id: b.node_id, depth: 0 } : parent && { root_id: parent.root_id, depth: parent.depth + 1 };
    if (!place) return b;
    placed.set(b.node_id, place);
    const withId = { ...{}, ...b, issued_event_id: ids.next('evt') };
    const composed = plannedIssue(withId, place);
    heads.push(boundaryOf(composed.event));
    return { ...{}, ...withId, planned_issue: { placed: place, composed } };
  });
  // Deep-frozen (a copy: the heads may be the caller's), so its JCS text is written once for the admission's digest
  // and the audit events that carry it (RW-003 §1.2), not once each (issue #24).
  return { budgets: planned, fence_set: frozenCopy([...fenceSetOf([...fence, ...heads])]) };
}

/** The parents `planOpens` needs placed and cannot place itself (nodes that exist already): the caller reads them. */
export function unplacedParents(budgets: readonly OpenBudgetRequest[], fence: readonly ControlBoundaryRef[]): string[] {
  const fresh = budgets.filter(newIn(fence));
  const opened = new Set(fresh.map((b) => b.node_id));
  return [...new Set(fresh.flatMap((b) => (b.parent_id !== undefined && !opened.has(b.parent_id) ? [b.parent_id] : [])))];
}

/** Whether a budget's node is new: its delegation stream has no head in `fence`. */
function newIn(fence: readonly ControlBoundaryRef[]): (b: OpenBudgetRequest) => boolean {
  const existing = new Set(fence.map(streamKey));
  return (b) => !existing.has(streamKey(streamOf(delegationScope(b.space_id, b.node_id))));
}
