/** Projected authority state (RW-003 §1.2, §7.3, §11.4): every event type's effect, and what never comes back. */
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES, type EventType } from '../../src/control/event.ts';
import { SCOPE_KINDS, type ScopeKind } from '../../src/control/scope.ts';
import { AUTHORITY_STATES, assertPlacement, isTerminal, nextState, permitsEffects, type AuthorityState } from '../../src/control/state.ts';
import { expectCode } from '../helpers/errors.ts';

const TERMINAL: AuthorityState[] = ['revoked', 'expired', 'retired', 'superseded'];

describe('authority state', () => {
  it('only active permits effects; exactly the four terminal states are terminal', () => {
    expect(AUTHORITY_STATES.filter(permitsEffects)).toEqual(['active']);
    expect(AUTHORITY_STATES.filter(isTerminal)).toEqual(TERMINAL);
  });

  it('issue and publish activate an unresolved stream (or take the named lifecycle) and never reset a later one', () => {
    expect(nextState('delegation', 'unresolved', 'rw003.delegation.issued', {})).toBe('active');
    expect(nextState('agent', 'unresolved', 'rw003.agent_card.published', { lifecycle: 'proposed' })).toBe('proposed');
    expect(nextState('delegation', 'suspended', 'rw003.delegation.issued', {})).toBe('suspended');
    expect(nextState('agent', 'tripped', 'rw003.agent_card.published', {})).toBe('tripped');
    // Unlike a lifecycle change: publishing activates a fresh agent, and a named lifecycle on a live stream is no change.
    expect(nextState('agent', 'unresolved', 'rw003.agent_card.published', {})).toBe('active');
    expect(nextState('delegation', 'active', 'rw003.delegation.issued', { lifecycle: 'suspended' })).toBe('active');
    expect(nextState('agent', 'active', 'rw003.agent_card.published', { lifecycle: 'retired' })).toBe('active');
  });

  it('lifecycle changes move to the named state; an unnamed one activates a fresh non-agent scope only', () => {
    expect(nextState('space', 'active', 'baton.scope.lifecycle_changed', { lifecycle: 'suspended' })).toBe('suspended');
    expect(nextState('space', 'unresolved', 'baton.scope.lifecycle_changed', {})).toBe('active');
    expect(nextState('agent', 'unresolved', 'rw003.agent_card.lifecycle_changed', {})).toBe('unresolved');
    expect(nextState('delegation', 'suspended', 'rw003.delegation.amended', {})).toBe('suspended');
    expect(nextState('delegation', 'active', 'rw003.delegation.amended', { lifecycle: 'suspended' })).toBe('suspended');
    expect(nextState('delegation', 'unresolved', 'rw003.delegation.issued', { lifecycle: 'proposed' })).toBe('proposed');
    // The refused value is echoed, bounded.
    expect(expectCode(() => nextState('space', 'active', 'baton.scope.lifecycle_changed', { lifecycle: 'x'.repeat(100) }), 'invalid_request').details).toEqual({ lifecycle: 'x'.repeat(64) });
    expect(expectCode(() => nextState('space', 'active', 'baton.scope.lifecycle_changed', { lifecycle: 'tripped' }), 'invalid_request').message).toBe('unknown lifecycle value');
    // Every named target a lifecycle change may take, terminal ones included.
    for (const l of ['proposed', 'active', 'suspended', 'revoked', 'retired', 'superseded'] as const) {
      expect(nextState('space', 'active', 'baton.scope.lifecycle_changed', { lifecycle: l })).toBe(l);
    }
    expect(expectCode(() => nextState('space', 'active', 'baton.scope.lifecycle_changed', { lifecycle: 7 }), 'invalid_request').details).toEqual({ lifecycle: '7' });
  });

  it('a lifecycle change never clears a tripped breaker, but a terminal target still applies', () => {
    expect(nextState('agent', 'tripped', 'rw003.agent_card.lifecycle_changed', { lifecycle: 'active' })).toBe('tripped');
    expect(nextState('agent', 'tripped', 'rw003.agent_card.lifecycle_changed', { lifecycle: 'revoked' })).toBe('revoked');
  });

  it('a breaker trips any live state; only its reset clears it, and a reset elsewhere changes nothing', () => {
    expect(nextState('delegation', 'active', 'rw003.circuit_breaker.tripped', {})).toBe('tripped');
    expect(nextState('delegation', 'suspended', 'rw003.circuit_breaker.tripped', { action: 'trip' })).toBe('tripped');
    expect(nextState('delegation', 'tripped', 'rw003.circuit_breaker.tripped', { action: 'reset' })).toBe('active');
    expect(nextState('delegation', 'suspended', 'rw003.circuit_breaker.tripped', { action: 'reset' })).toBe('suspended');
  });

  it('revocation is final unless made for a reassignment, which only the reassignment naming a revision ends', () => {
    expect(nextState('delegation', 'active', 'rw003.delegation.revoked', {})).toBe('revoked');
    expect(nextState('delegation', 'active', 'rw003.delegation.revoked', { reassignment: 'yes' })).toBe('revoked');
    expect(nextState('delegation', 'active', 'rw003.delegation.revoked', { reassignment: true })).toBe('reassigning');
    expect(nextState('delegation', 'reassigning', 'rw003.delegation.reassigned', { contract_revision: 'rev_2' })).toBe('active');
    for (const payload of [{}, { contract_revision: '' }, { contract_revision: 2 }]) {
      const err = expectCode(() => nextState('delegation', 'reassigning', 'rw003.delegation.reassigned', payload), 'invalid_request');
      expect(err.message).toBe('a reassignment must name the contract revision it assigns');
    }
    for (const from of ['revoked', 'active'] as const) {
      const err = expectCode(() => nextState('delegation', from, 'rw003.delegation.reassigned', { contract_revision: 'rev_2' }), 'invalid_request');
      expect(err.message).toBe('only a delegation revoked for reassignment can be reassigned');
      expect(err.details).toEqual({ state: from });
    }
    expect(nextState('delegation', 'active', 'rw003.delegation.expired', {})).toBe('expired');
  });

  it('nothing revives a terminal state', () => {
    for (const t of TERMINAL) {
      expect(nextState('delegation', t, 'rw003.delegation.issued', {})).toBe(t);
      expect(nextState('delegation', t, 'rw003.delegation.amended', { lifecycle: 'active' })).toBe(t);
      expect(nextState('delegation', t, 'rw003.circuit_breaker.tripped', { action: 'reset' })).toBe(t);
      expect(nextState('delegation', t, 'rw003.subdelegation.attested', {})).toBe(t);
    }
  });

  it('other events activate a fresh stream and keep a live one; attempt streams stay unresolved', () => {
    expect(nextState('delegation', 'unresolved', 'rw003.subdelegation.attested', {})).toBe('active');
    expect(nextState('delegation', 'suspended', 'rw003.subdelegation.attested', {})).toBe('suspended');
    expect(nextState('attempt', 'unresolved', 'rw003.execution.started', {})).toBe('unresolved');
    expect(nextState('attempt', 'active', 'rw003.execution.terminal', {})).toBe('unresolved');
  });

  it('each event type belongs on its own kind of stream', () => {
    expect(() => assertPlacement('delegation', 'rw003.delegation.revoked')).not.toThrow();
    expect(() => assertPlacement('attempt', 'rw003.execution.terminal')).not.toThrow();
    expect(() => assertPlacement('policy', 'rw003.circuit_breaker.tripped')).not.toThrow();
    const err = expectCode(() => assertPlacement('agent', 'rw003.delegation.revoked'), 'invalid_request');
    expect(err.message).toBe('rw003.delegation.revoked does not belong on a agent stream');
    expect(err.details).toEqual({ kind: 'agent', event_type: 'rw003.delegation.revoked' });
    expectCode(() => assertPlacement('delegation', 'rw003.execution.started'), 'invalid_request');
    expectCode(() => assertPlacement('attempt', 'rw003.circuit_breaker.tripped'), 'invalid_request');
    expectCode(() => assertPlacement('space', 'rw003.delegation.issued'), 'invalid_request');
  });

  it('the whole placement table (RW-003 §1.2): exactly these event types on each kind of stream', () => {
    const lifecycleAndBreaker = ['baton.scope.lifecycle_changed', 'rw003.circuit_breaker.tripped'];
    const table: Record<ScopeKind, readonly string[]> = {
      agent: ['rw003.agent_card.published', 'rw003.agent_card.lifecycle_changed', 'rw003.circuit_breaker.tripped'],
      delegation: [
        'rw003.delegation.issued',
        'rw003.delegation.amended',
        'rw003.delegation.revoked',
        'rw003.delegation.reassigned',
        'rw003.delegation.expired',
        'rw003.subdelegation.attested',
        'rw003.circuit_breaker.tripped',
      ],
      attempt: ['rw003.permission.evaluated', 'rw003.execution.started', 'rw003.execution.checkpointed', 'rw003.execution.terminal'],
      space: lifecycleAndBreaker,
      policy: lifecycleAndBreaker,
      consent: lifecycleAndBreaker,
    };
    const placed = (kind: ScopeKind, type: EventType) => {
      try {
        assertPlacement(kind, type);
        return true;
      } catch {
        return false;
      }
    };
    for (const kind of SCOPE_KINDS) expect(EVENT_TYPES.filter((t) => placed(kind, t)), kind).toEqual(EVENT_TYPES.filter((t) => table[kind].includes(t)));
  });
});
