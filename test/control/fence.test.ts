/** RW-003 §1.2 ControlFenceSet: the pure fence rule, every failure reason at its boundary. */
import { describe, expect, it } from 'vitest';
import { assertFences, checkFences, ControlBoundaryRef, fenceSetOf, isCanonicalFenceSet, streamsToRead, type StreamHead } from '../../src/control/fence.ts';
import { streamKey, streamOf, type ControlScopeRef } from '../../src/control/scope.ts';
import type { AuthorityState } from '../../src/control/state.ts';
import { expectCode } from '../helpers/errors.ts';

const D = (c: string) => `sha256:${c.repeat(64)}`;
const scope = (scope_kind: ControlScopeRef['scope_kind'], scope_id: string): ControlScopeRef => ({ space_id: 'sp1', scope_kind, scope_id });
const boundary = (s: ControlScopeRef, position: number, c = 'a'): ControlBoundaryRef => ({ ...streamOf(s), position, event_id: `ev_${s.scope_id}_${position}`, event_digest: D(c) });
const headsOf = (...hs: Array<[ControlBoundaryRef, AuthorityState]>) => new Map<string, StreamHead>(hs.map(([b, state]) => [streamKey(b), { ...b, state }]));

const space = scope('space', 'sp1');
const deleg = scope('delegation', 'd1');
const agent = scope('agent', 'card_a');

describe('fenceSetOf', () => {
  it('sorts by stream and keeps one boundary per stream', () => {
    const set = fenceSetOf([boundary(space, 2), boundary(deleg, 1), boundary(agent, 3), boundary(deleg, 1)]);
    expect(set.map((b) => b.branch_id)).toEqual(['agent:card_a', 'delegation:d1', 'space:sp1']);
    expect(isCanonicalFenceSet(set)).toBe(true);
  });

  it('refuses two different heads for one stream (position, id or digest) and any attempt branch', () => {
    for (const other of [{ ...boundary(deleg, 1), position: 2 }, { ...boundary(deleg, 1), event_id: 'ev_other' }, boundary(deleg, 1, 'b')]) {
      const err = expectCode(() => fenceSetOf([boundary(deleg, 1), other]), 'invalid_request');
      expect(err.message).toBe('fence set holds two heads for one stream');
      expect(err.details).toEqual({ branch_id: 'delegation:d1' });
    }
    const err = expectCode(() => fenceSetOf([boundary(scope('attempt', 'att1'), 1)]), 'invalid_request');
    expect(err.message).toBe('attempt audit streams are never fenced');
    expect(err.details).toEqual({ branch_id: 'attempt:att1' });
  });

  it('a set out of order or with a duplicate is not canonical', () => {
    expect(isCanonicalFenceSet([])).toBe(true);
    expect(isCanonicalFenceSet([boundary(deleg, 1), boundary(agent, 1)])).toBe(false);
    expect(isCanonicalFenceSet([boundary(deleg, 1), boundary(deleg, 1)])).toBe(false);
  });
});

describe('checkFences', () => {
  // Built inside each test, not at collection: a throw while a file is collected is no failing test to Stryker's runner.
  const fenced = () => fenceSetOf([boundary(deleg, 4), boundary(space, 2)]);
  const current = () => headsOf([boundary(deleg, 4), 'active'], [boundary(space, 2), 'active']);

  it('passes when every required authority stream is fenced at its exact, permitting head', () => {
    expect(checkFences(fenced(), [deleg, space, scope('attempt', 'att1')], current())).toEqual([]);
    expect(() => assertFences(fenced(), [deleg, space], current())).not.toThrow();
  });

  it('names a required stream missing from the set', () => {
    expect(checkFences(fenced(), [deleg, space, agent], current())).toEqual([{ branch_id: 'agent:card_a', reason: 'missing_from_fence_set' }]);
  });

  it('a head that moved by position, event id or digest is stale', () => {
    const at4 = boundary(deleg, 4);
    for (const moved of [{ ...at4, position: 5 }, { ...at4, event_id: 'ev_x' }, { ...at4, event_digest: D('b') }]) {
      expect(checkFences(fenced(), [deleg], headsOf([moved, 'active'], [boundary(space, 2), 'active']))).toEqual([{ branch_id: 'delegation:d1', reason: 'head_moved' }]);
    }
  });

  it('an unread or unresolved stream fails closed; a non-permitting state says which', () => {
    expect(checkFences(fenced(), [], headsOf([boundary(space, 2), 'active']))).toEqual([{ branch_id: 'delegation:d1', reason: 'unresolved' }]);
    expect(checkFences(fenced(), [], headsOf([boundary(deleg, 4), 'unresolved'], [boundary(space, 2), 'active']))).toEqual([{ branch_id: 'delegation:d1', reason: 'unresolved' }]);
    for (const state of ['suspended', 'tripped', 'revoked', 'reassigning', 'proposed'] as const) {
      expect(checkFences(fenced(), [], headsOf([boundary(deleg, 4), state], [boundary(space, 2), 'active']))).toEqual([{ branch_id: 'delegation:d1', reason: 'not_permitting', state }]);
    }
  });

  it('reports every failure, and assertFences throws context_invalidated with all of them', () => {
    const heads = headsOf([boundary(deleg, 5), 'active'], [boundary(space, 2), 'revoked']);
    const err = expectCode(() => assertFences(fenced(), [deleg, space, agent], heads), 'context_invalidated');
    expect(err.message).toBe('control fence is stale or does not permit the effect');
    expect(err.details.failures).toEqual([
      { branch_id: 'agent:card_a', reason: 'missing_from_fence_set' },
      { branch_id: 'delegation:d1', reason: 'head_moved' },
      { branch_id: 'space:sp1', reason: 'not_permitting', state: 'revoked' },
    ]);
  });

  it('refuses a fence set that is not sorted and duplicate-free', () => {
    const err = expectCode(() => assertFences([boundary(space, 2), boundary(deleg, 4)], [], current()), 'invalid_request');
    expect(err.message).toBe('fence set must be sorted and duplicate-free');
  });
});

describe('ControlBoundaryRef (the wire form of one fenced head)', () => {
  const ref = boundary(deleg, 4);

  it('takes a boundary with stream ids of 1 to 2048 characters, and nothing else', () => {
    expect(ControlBoundaryRef.parse(ref)).toEqual(ref);
    for (const n of [1, 2, 2048]) {
      const id = 'p'.repeat(n);
      expect(ControlBoundaryRef.safeParse({ ...ref, project_id: id, branch_id: id }).success).toBe(true);
    }
    for (const id of ['', 'p'.repeat(2049)]) {
      expect(ControlBoundaryRef.safeParse({ ...ref, project_id: id }).success).toBe(false);
      expect(ControlBoundaryRef.safeParse({ ...ref, branch_id: id }).success).toBe(false);
    }
    expect(ControlBoundaryRef.safeParse({ ...ref, state: 'active' }).success).toBe(false);
  });
});

describe('streamsToRead', () => {
  it('reads the fenced and the required authority streams once each, in lock order', () => {
    expect(streamsToRead(fenceSetOf([boundary(space, 2)]), [deleg, space, scope('attempt', 'att1')])).toEqual([streamOf(deleg), streamOf(space)]);
    // A fenced stream no rule requires is still read (its head must not have moved either).
    expect(streamsToRead(fenceSetOf([boundary(agent, 1)]), [deleg])).toEqual([streamOf(agent), streamOf(deleg)]);
  });
});
