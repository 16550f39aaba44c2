/**
 * Projected authority state of one control stream, folded event by event.
 * Terminal states (revoked, expired, retired) never come back: RW-003 §7.3
 * revocation is final and a replacement is a new revision, not an undo.
 */
import { invalidRequest } from '../errors.ts';
import type { EventType } from './event.ts';
import type { ScopeKind } from './scope.ts';

export const AUTHORITY_STATES = ['unresolved', 'proposed', 'active', 'suspended', 'tripped', 'reassigning', 'revoked', 'expired', 'retired', 'superseded'] as const;
export type AuthorityState = (typeof AUTHORITY_STATES)[number];

const TERMINAL: ReadonlySet<AuthorityState> = new Set(['revoked', 'expired', 'retired', 'superseded']);

/** Only an active scope permits new effects. */
export function permitsEffects(state: AuthorityState): boolean {
  return state === 'active';
}

export function isTerminal(state: AuthorityState): boolean {
  return TERMINAL.has(state);
}

/** Which event types may be appended to which kind of stream (RW-003 §1.2 placement). */
const PLACEMENT: Readonly<Record<ScopeKind, ReadonlySet<EventType>>> = {
  agent: new Set(['rw003.agent_card.published', 'rw003.agent_card.lifecycle_changed', 'rw003.circuit_breaker.tripped']),
  delegation: new Set([
    'rw003.delegation.issued',
    'rw003.delegation.amended',
    'rw003.delegation.revoked',
    'rw003.delegation.reassigned',
    'rw003.delegation.expired',
    'rw003.subdelegation.attested',
    'rw003.circuit_breaker.tripped',
  ]),
  attempt: new Set(['rw003.permission.evaluated', 'rw003.execution.started', 'rw003.execution.checkpointed', 'rw003.execution.terminal']),
  space: new Set(['baton.scope.lifecycle_changed', 'rw003.circuit_breaker.tripped']),
  policy: new Set(['baton.scope.lifecycle_changed', 'rw003.circuit_breaker.tripped']),
  consent: new Set(['baton.scope.lifecycle_changed', 'rw003.circuit_breaker.tripped']),
};

export function assertPlacement(kind: ScopeKind, type: EventType): void {
  if (!PLACEMENT[kind].has(type)) throw invalidRequest(`${type} does not belong on a ${kind} stream`, { kind, event_type: type });
}

const LIFECYCLE_TARGETS = new Set<AuthorityState>(['proposed', 'active', 'suspended', 'revoked', 'retired', 'superseded']);

/**
 * The state after appending an event. Attempt streams stay 'unresolved':
 * they are audit-only and can never be fenced (RW-003 §1.2).
 */
export function nextState(kind: ScopeKind, current: AuthorityState, type: EventType, payload: Record<string, unknown>): AuthorityState {
  if (kind === 'attempt') return 'unresolved';
  if (type === 'rw003.delegation.reassigned') {
    // RW-003 §11.4: a revocation made for a reassignment ended the old
    // assignment for good; the stream continues only under the new contract
    // revision the reassignment names. A revocation for cause stays final.
    if (current !== 'reassigning') throw invalidRequest('only a delegation revoked for reassignment can be reassigned', { state: current });
    if (typeof payload.contract_revision !== 'string' || payload.contract_revision === '') {
      throw invalidRequest('a reassignment must name the contract revision it assigns');
    }
    return 'active';
  }
  if (isTerminal(current)) {
    // History may still grow (audit, attestation), but nothing revives it.
    return current;
  }
  switch (type) {
    case 'rw003.agent_card.published':
    case 'rw003.delegation.issued':
      return current === 'unresolved' ? lifecycleOf(payload, 'active') : current;
    case 'rw003.agent_card.lifecycle_changed':
    case 'rw003.delegation.amended':
    case 'baton.scope.lifecycle_changed':
      return lifecycleAfter(payload, current, current === 'unresolved' && kind !== 'agent' ? 'active' : current);
    case 'rw003.delegation.revoked':
      return payload.reassignment === true ? 'reassigning' : 'revoked';
    case 'rw003.delegation.expired':
      return 'expired';
    case 'rw003.circuit_breaker.tripped':
      return payload.action === 'reset' ? (current === 'tripped' ? 'active' : current) : 'tripped';
    default:
      return current === 'unresolved' ? 'active' : current;
  }
}

/** Lifecycle changes never clear a tripped breaker: only its reset does; a terminal target still applies. */
function lifecycleAfter(payload: Record<string, unknown>, current: AuthorityState, fallback: AuthorityState): AuthorityState {
  const next = lifecycleOf(payload, fallback);
  return current === 'tripped' && !isTerminal(next) ? 'tripped' : next;
}

function lifecycleOf(payload: Record<string, unknown>, fallback: AuthorityState): AuthorityState {
  const l = payload.lifecycle;
  if (l === undefined) return fallback;
  if (typeof l !== 'string' || !LIFECYCLE_TARGETS.has(l as AuthorityState)) {
    throw invalidRequest('unknown lifecycle value', { lifecycle: String(l).slice(0, 64) });
  }
  return l as AuthorityState;
}
