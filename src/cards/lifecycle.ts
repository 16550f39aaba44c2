/**
 * Agent Card lifecycle (RW-003 §4.1 lifecycle, §4.3, §1.1): proposed, active,
 * suspended, revoked, retired, superseded. Each change is a new immutable
 * revision of the card's record — `rw003.agent_card.published` or
 * `rw003.agent_card.lifecycle_changed` in its body — appended to the agent
 * authority branch (§1.2). The projected state over those records is
 * authoritative; the lifecycle a card asserts about itself is not (§3).
 *
 * The projection and the delegation check are pure; production binds the
 * lifecycle read from a verified card or the operator's facts and checks it
 * with assertCardUsableForDelegation (src/gateway/delegatees.ts).
 */
import { contextInvalidated, invalidRequest } from '../errors.ts';
import { refOf, type SealedRecord } from '../records/envelope.ts';
import type { ActorRef, RevisionRef } from '../records/revision-ref.ts';
import type { UtcTime } from '../records/time.ts';
import type { CardLifecycleState } from './extension.ts';

export const CARD_PUBLISHED = 'rw003.agent_card.published';
export const CARD_LIFECYCLE_CHANGED = 'rw003.agent_card.lifecycle_changed';

/** RW-003 §1.2 ControlScopeRef of an agent authority branch. */
export interface AgentScopeRef {
  space_id: string;
  scope_kind: 'agent';
  scope_id: string;
}

export type CardEventBody =
  | {
      event_type: typeof CARD_PUBLISHED;
      control_scope_ref: AgentScopeRef;
      agent_card_id: string;
      agent_actor_ref: ActorRef;
      card_revision_id: string;
      card_payload_digest: string;
      form: 'public' | 'extended';
      asserted_lifecycle: CardLifecycleState;
    }
  | {
      event_type: typeof CARD_LIFECYCLE_CHANGED;
      control_scope_ref: AgentScopeRef;
      agent_card_id: string;
      from: CardLifecycleState;
      to: CardLifecycleState;
      reason: string;
      effective_at: UtcTime;
    };

export type CardEventRecord = SealedRecord<CardEventBody>;

/** The projection of one card's records. */
export interface CardLifecycleView {
  agent_card_id: string;
  state: CardLifecycleState;
  /** Exact head revision; a fence for RW-003 §1.2 checks. */
  head: RevisionRef;
  card_payload_digest: string;
  reason?: string;
  effective_at?: UtcTime;
}

const TERMINAL: readonly CardLifecycleState[] = ['revoked', 'retired', 'superseded'];
const TRANSITIONS: Readonly<Record<CardLifecycleState, readonly CardLifecycleState[]>> = {
  proposed: ['active', 'revoked', 'retired'],
  active: ['suspended', 'revoked', 'retired', 'superseded'],
  suspended: ['active', 'revoked', 'retired', 'superseded'],
  revoked: [],
  retired: [],
  superseded: [],
};

/** True when RW-003 permits moving a card from `from` to `to`. Terminal states never move. */
export function canTransition(from: CardLifecycleState, to: CardLifecycleState): boolean {
  return TRANSITIONS[from].includes(to);
}

/** Folds one record into the view; throws on an out-of-order or illegal record. */
export function applyCardEvent(view: CardLifecycleView | undefined, record: CardEventRecord): CardLifecycleView {
  const body = record.body;
  const head = refOf(record);
  if (body.event_type === CARD_PUBLISHED) {
    if (view === undefined) {
      if (body.asserted_lifecycle !== 'proposed' && body.asserted_lifecycle !== 'active') {
        throw invalidRequest('a card is first published as proposed or active', { state: body.asserted_lifecycle });
      }
      return { agent_card_id: body.agent_card_id, state: body.asserted_lifecycle, head, card_payload_digest: body.card_payload_digest };
    }
    if (TERMINAL.includes(view.state)) throw invalidRequest('a terminal card cannot be republished', { state: view.state });
    // A new revision never reactivates a suspended card: only lifecycle_changed moves state.
    return { ...{}, ...view, head, card_payload_digest: body.card_payload_digest };
  }
  if (view === undefined) throw invalidRequest('lifecycle change for an unpublished card');
  if (view.state !== body.from) throw contextInvalidated('lifecycle change is based on a stale state', { state: view.state });
  if (!canTransition(body.from, body.to)) throw invalidRequest('illegal card lifecycle transition', { from: body.from, to: body.to });
  return { ...{}, ...view, state: body.to, head, reason: body.reason, effective_at: body.effective_at };
}

/** Projects a card's ordered records. */
export function projectCardLifecycle(records: readonly CardEventRecord[]): CardLifecycleView | undefined {
  return records.reduce<CardLifecycleView | undefined>(applyCardEvent, undefined);
}

/** RW-003 §4.3: suspension or revocation (or any non-active state) refuses new delegation. */
export function assertCardUsableForDelegation(view: CardLifecycleView | undefined): asserts view is CardLifecycleView {
  if (view === undefined) throw contextInvalidated('agent card has no projected lifecycle');
  if (view.state !== 'active') {
    throw contextInvalidated(`agent card is ${view.state}; new delegation is refused`, { agent_card_id: view.agent_card_id, state: view.state });
  }
}
