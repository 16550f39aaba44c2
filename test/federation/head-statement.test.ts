import { describe, expect, it } from 'vitest';
import { CLOCK_SKEW_MS, HEAD_STATEMENT_TYPE, remoteFenceHolds, remoteFenceOf, type HeadStatement } from '../../src/federation/head-statement.ts';
import { splitChain } from '../../src/federation/scopes.ts';
import type { DelegationContract } from '../../src/contracts/model.ts';
import { isBatonError } from '../../src/errors.ts';

const NOW = new Date('2026-12-03T10:00:00.000Z');
const digest = `sha256:${'a'.repeat(64)}`;
const scope = (kind: 'space' | 'delegation' | 'agent', id: string, space = 'space_a') => ({ space_id: space, scope_kind: kind, scope_id: id });
const boundary = (branch: string, position = 1) => ({ project_id: 'rw-control:space_a', branch_id: branch, position, event_id: `evt_${branch.replace(/\W/g, '')}${position}`, event_digest: digest });
const required = [scope('space', 'space_a'), scope('delegation', 'dlg_root'), scope('delegation', 'dlg_leaf')];

function statement(over: Partial<HeadStatement> = {}): HeadStatement {
  return {
    typ: HEAD_STATEMENT_TYPE,
    iss: 'actor_baton_a',
    aud: 'actor_baton_b',
    subject: 'dlg_leaf',
    issued_at: NOW.toISOString(),
    max_staleness_ms: 0,
    heads: required.map((s) => ({ scope: s, boundary: boundary(`${s.scope_kind}:${s.scope_id}`), state: 'active' as const })),
    ...over,
  };
}
const expectation = { iss: 'actor_baton_a', aud: 'actor_baton_b', subject: 'dlg_leaf', required, now: NOW, maxStalenessMs: 0 };

function failuresOf(fn: () => unknown): Array<{ reason: string; state?: string }> {
  try {
    fn();
  } catch (err) {
    expect(isBatonError(err, 'context_invalidated')).toBe(true);
    return (err as { details: { failures: Array<{ reason: string }> } }).details.failures;
  }
  throw new Error('expected a refusal');
}

describe('remoteFenceOf (RW-003 §1.2 recheck before transmission, across stores)', () => {
  it('binds one remote fence entry per required scope when every head permits', () => {
    const fence = remoteFenceOf(statement(), expectation);
    expect(fence.map((e) => e.scope.scope_id)).toEqual(['space_a', 'dlg_root', 'dlg_leaf']);
    expect(fence.every((e) => e.upstream === 'actor_baton_a' && e.state === 'active')).toBe(true);
  });

  it('refuses a head that does not permit, naming its state', () => {
    const s = statement();
    s.heads[1]!.state = 'revoked';
    expect(failuresOf(() => remoteFenceOf(s, expectation))).toEqual([{ reason: 'not_permitting', branch_id: 'delegation:dlg_root', state: 'revoked' }]);
  });

  it('refuses a missing or unresolved head', () => {
    const s = statement({ heads: statement().heads.slice(0, 2) });
    expect(failuresOf(() => remoteFenceOf(s, expectation))).toEqual([{ reason: 'unresolved', branch_id: 'delegation:dlg_leaf' }]);
    const t = statement();
    t.heads[0] = { ...t.heads[0]!, boundary: null, state: 'unresolved' };
    expect(failuresOf(() => remoteFenceOf(t, expectation))[0]!.reason).toBe('unresolved');
  });

  it('refuses a statement for other parties or another delegation', () => {
    for (const over of [{ aud: 'actor_baton_x' }, { iss: 'actor_baton_x' }, { subject: 'dlg_other' }]) {
      expect(failuresOf(() => remoteFenceOf(statement(over), expectation))[0]!.reason).toMatch(/other parties/);
    }
  });

  it('staleness: the stricter of both sides plus the clock skew; from the future beyond the skew is refused too', () => {
    const at = (ms: number) => new Date(NOW.getTime() + ms).toISOString();
    expect(() => remoteFenceOf(statement({ issued_at: at(-CLOCK_SKEW_MS) }), expectation)).not.toThrow();
    expect(failuresOf(() => remoteFenceOf(statement({ issued_at: at(-CLOCK_SKEW_MS - 1) }), expectation))[0]!.reason).toBe('stale');
    expect(failuresOf(() => remoteFenceOf(statement({ issued_at: at(CLOCK_SKEW_MS + 1) }), expectation))[0]!.reason).toBe('stale');
    // The downstream allows 30 s, the upstream states 10 s: 10 s applies.
    const lax = { ...expectation, maxStalenessMs: 30_000 };
    expect(() => remoteFenceOf(statement({ max_staleness_ms: 10_000, issued_at: at(-10_000 - CLOCK_SKEW_MS) }), lax)).not.toThrow();
    expect(failuresOf(() => remoteFenceOf(statement({ max_staleness_ms: 10_000, issued_at: at(-10_001 - CLOCK_SKEW_MS) }), lax))[0]!.reason).toBe('stale');
  });
});

describe('remoteFenceHolds (post-effect recheck)', () => {
  const bound = remoteFenceOf(statement(), expectation);
  it('holds while every bound head is unchanged and permitting', () => {
    expect(remoteFenceHolds(bound, statement())).toBe(true);
  });
  it('fails on a moved head, a non-permitting one or a missing one', () => {
    const moved = statement();
    moved.heads[2] = { ...moved.heads[2]!, boundary: boundary('delegation:dlg_leaf', 2) };
    expect(remoteFenceHolds(bound, moved)).toBe(false);
    const suspended = statement();
    suspended.heads[0]!.state = 'suspended';
    expect(remoteFenceHolds(bound, suspended)).toBe(false);
    expect(remoteFenceHolds(bound, statement({ heads: statement().heads.slice(1) }))).toBe(false);
  });
});

describe('splitChain', () => {
  const contract = (signer: string, scopes: ReturnType<typeof scope>[]) => ({ issued_by_actor_ref: { object_id: signer }, record_id: 'dlg_x', body: { control_scopes: scopes } }) as unknown as DelegationContract;
  it('a chain this gateway issued itself is not split', () => {
    expect(splitChain([contract('actor_baton_b', [scope('space', 'space_a')])], 'actor_baton_b', 'space_b')).toBeUndefined();
  });
  it("the upstream's leaf scopes are remote; this gateway's additions are local, agents in its own space, plus its space", () => {
    const up = [scope('space', 'space_a'), scope('delegation', 'dlg_root'), scope('delegation', 'dlg_leaf'), scope('agent', 'card_b')];
    const mine = [...up, scope('delegation', 'dlg_child'), scope('agent', 'card_x')];
    const s = splitChain([contract('actor_baton_a', up.slice(0, 2)), contract('actor_baton_a', up), contract('actor_baton_b', mine)], 'actor_baton_b', 'space_b')!;
    expect(s.upstreamLeaf).toBe(1);
    expect(s.upstreamActor).toBe('actor_baton_a');
    expect(s.remote).toEqual(up);
    expect(s.local).toEqual([scope('space', 'space_b', 'space_b'), scope('delegation', 'dlg_child'), scope('agent', 'card_x', 'space_b')]);
  });
});
