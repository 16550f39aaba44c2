import { describe, expect, it } from 'vitest';
import { checkpointBody, resumeFailures, type CheckpointBody } from '../../src/attempts/checkpoint.ts';
import { nextState } from '../../src/control/state.ts';
import { streamKey } from '../../src/control/scope.ts';
import type { StreamHead } from '../../src/control/fence.ts';
import { openAttempt } from '../push/support.ts';
import { expectCode } from '../helpers/errors.ts';

const ref = { object_id: 'in_1', revision_id: 'rev_in', content_digest: `sha256:${'1'.repeat(64)}` };
const boundary = (branch: string, position: number) => ({ project_id: 'rw-control:sp', branch_id: branch, position, event_id: `evt_${branch}_${position}`, event_digest: `sha256:${'2'.repeat(64)}` });
const head = (branch: string, position: number, state: StreamHead['state'] = 'active'): StreamHead => ({ ...boundary(branch, position), state });

function cp(patch: Partial<CheckpointBody> = {}): CheckpointBody {
  const attempt = openAttempt({ input_ref: ref, fence_set: [boundary('space:sp', 1), boundary('delegation:root', 1), boundary('delegation:d', 4), boundary('agent:alpha', 2)] }).body;
  return { ...checkpointBody({ checkpointId: 'cp_1', attempt, sequence: 1, reservation: 'held', balances: [{ dimension: 'invocations', ceiling: '5', consumed: '0', reserved: '1' }], reason: 'test' }), ...patch };
}

const current = (over: Record<string, StreamHead> = {}) =>
  new Map(
    Object.entries({ 'space:sp': head('space:sp', 1), 'delegation:root': head('delegation:root', 1), 'delegation:d': head('delegation:d', 6), 'agent:alpha': head('agent:alpha', 3, 'suspended'), ...over }).map(([, h]) => [streamKey(h), h]),
  );
const moved = new Set([streamKey(boundary('delegation:d', 0)), streamKey(boundary('agent:alpha', 0))]);
const ok = { heads: current(), moved, inputDigest: ref.content_digest, expectedInputDigest: ref.content_digest, reservation: 'consumed' as const, remaining: [{ dimension: 'invocations', remaining: 4n }] };

describe('DelegationCheckpoint (RW-003 §7.2)', () => {
  it('records inputs, fences, remaining budget, the external operation and what is still uncertain', () => {
    const body = cp();
    expect(body).toMatchObject({
      checkpoint_id: 'cp_1',
      sequence: 1,
      input_revisions: [ref],
      last_project_position: null,
      remaining_budget: [{ dimension: 'invocations', remaining: '4' }],
      external_operations: [{ kind: 'a2a_task', task_id: 'remote-task-1', reconciliation: 'held' }],
      next_safe_action: 'reconcile',
    });
    expect(body.control_fence_set).toHaveLength(4);
    expect(body.uncertainty.join(' ')).toMatch(/may have happened/);
    expect(body.gates.length).toBeGreaterThan(0);
  });

  it('resumes only when every other fenced head, the input and reconciliation still hold', () => {
    expect(resumeFailures(cp(), ok)).toEqual([]);
    expect(resumeFailures(cp(), { ...ok, heads: current({ 'delegation:root': head('delegation:root', 2) }) }).join()).toMatch(/delegation:root moved/);
    expect(resumeFailures(cp(), { ...ok, heads: current({ 'space:sp': head('space:sp', 1, 'suspended') }) }).join()).toMatch(/space:sp is suspended/);
    expect(resumeFailures(cp(), { ...ok, inputDigest: `sha256:${'9'.repeat(64)}` }).join()).toMatch(/input fixity/);
    expect(resumeFailures(cp(), { ...ok, reservation: 'unknown' }).join()).toMatch(/unreconciled/);
    expect(resumeFailures(cp(), { ...ok, remaining: [{ dimension: 'invocations', remaining: 0n }] }).join()).toMatch(/no budget left on: invocations/);
    expect(resumeFailures(cp({ input_revisions: [] }), { ...ok, expectedInputDigest: undefined }).join()).toMatch(/no exact input/);
    // Without the reassigned delegation in `moved`, its own advance is a failure too.
    expect(resumeFailures(cp(), { ...ok, moved: new Set() }).length).toBe(2);
  });
});

describe('delegation stream after a reassignment (RW-003 §11.4)', () => {
  it('only a revocation for reassignment can continue, under a named new revision; a revocation for cause stays final', () => {
    const reassigning = nextState('delegation', 'active', 'rw003.delegation.revoked', { reassignment: true });
    expect(reassigning).toBe('reassigning');
    expect(nextState('delegation', reassigning, 'rw003.delegation.reassigned', { contract_revision: 'rev_2' })).toBe('active');
    expectCode(() => nextState('delegation', reassigning, 'rw003.delegation.reassigned', {}), 'invalid_request');
    expectCode(() => nextState('delegation', 'revoked', 'rw003.delegation.reassigned', { contract_revision: 'rev_2' }), 'invalid_request');
    expectCode(() => nextState('delegation', 'active', 'rw003.delegation.reassigned', { contract_revision: 'rev_2' }), 'invalid_request');
    expect(nextState('delegation', 'revoked', 'rw003.delegation.amended', { lifecycle: 'active' })).toBe('revoked');
  });

  it('a tripped breaker is cleared by its reset only, not by a lifecycle change', () => {
    expect(nextState('delegation', 'tripped', 'rw003.delegation.amended', { lifecycle: 'active' })).toBe('tripped');
    expect(nextState('agent', 'tripped', 'rw003.agent_card.lifecycle_changed', { lifecycle: 'active' })).toBe('tripped');
    expect(nextState('agent', 'tripped', 'rw003.agent_card.lifecycle_changed', { lifecycle: 'revoked' })).toBe('revoked');
    expect(nextState('agent', 'tripped', 'rw003.circuit_breaker.tripped', { action: 'reset' })).toBe('active');
  });
});
