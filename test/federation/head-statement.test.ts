import { describe, expect, it } from 'vitest';
import { CLOCK_SKEW_MS, HEAD_STATEMENT_TYPE, HeadStatement, RemoteFenceEntry, remoteFenceHolds, remoteFenceOf } from '../../src/federation/head-statement.ts';
import { localStreamScope, splitChain } from '../../src/federation/scopes.ts';
import type { DelegationContract } from '../../src/contracts/model.ts';
import { isBatonError, type BatonError } from '../../src/errors.ts';

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
    expect((err as BatonError).message).toBe('upstream control heads do not permit the effect');
    return (err as { details: { failures: Array<{ reason: string }> } }).details.failures;
  }
  throw new Error('expected a refusal');
}

describe('remoteFenceOf (RW-003 §1.2 recheck before transmission, across stores)', () => {
  it('binds one remote fence entry per required scope when every head permits', () => {
    const fence = remoteFenceOf(statement(), expectation);
    expect(fence).toEqual(required.map((s) => ({ upstream: 'actor_baton_a', scope: s, boundary: boundary(`${s.scope_kind}:${s.scope_id}`), state: 'active' })));
  });

  it('refuses a head that does not permit, naming its state', () => {
    const s = statement();
    s.heads[1]!.state = 'revoked';
    expect(failuresOf(() => remoteFenceOf(s, expectation))).toEqual([{ reason: 'not_permitting', branch_id: 'delegation:dlg_root', state: 'revoked' }]);
  });

  it('reports every failure at once: parties, staleness and each required head', () => {
    const s = statement({ subject: 'dlg_other', issued_at: new Date(NOW.getTime() - 60_000).toISOString(), heads: statement().heads.slice(1) });
    s.heads[0]!.state = 'suspended';
    expect(failuresOf(() => remoteFenceOf(s, expectation))).toEqual([
      { reason: 'statement names other parties or another delegation' },
      { reason: 'stale' },
      { reason: 'unresolved', branch_id: 'space:space_a' },
      { reason: 'not_permitting', branch_id: 'delegation:dlg_root', state: 'suspended' },
    ]);
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
      expect(failuresOf(() => remoteFenceOf(statement(over), expectation))).toEqual([{ reason: 'statement names other parties or another delegation' }]);
    }
  });

  it('staleness: the stricter of both sides plus the clock skew; from the future beyond the skew is refused too', () => {
    const at = (ms: number) => new Date(NOW.getTime() + ms).toISOString();
    expect(() => remoteFenceOf(statement({ issued_at: at(-CLOCK_SKEW_MS) }), expectation)).not.toThrow();
    expect(() => remoteFenceOf(statement({ issued_at: at(CLOCK_SKEW_MS) }), expectation)).not.toThrow();
    expect(failuresOf(() => remoteFenceOf(statement({ issued_at: at(-CLOCK_SKEW_MS - 1) }), expectation))).toEqual([{ reason: 'stale' }]);
    expect(failuresOf(() => remoteFenceOf(statement({ issued_at: at(CLOCK_SKEW_MS + 1) }), expectation))).toEqual([{ reason: 'stale' }]);
    // The downstream allows 30 s, the upstream states 10 s: 10 s applies.
    const lax = { ...expectation, maxStalenessMs: 30_000 };
    expect(() => remoteFenceOf(statement({ max_staleness_ms: 10_000, issued_at: at(-10_000 - CLOCK_SKEW_MS) }), lax)).not.toThrow();
    expect(failuresOf(() => remoteFenceOf(statement({ max_staleness_ms: 10_000, issued_at: at(-10_001 - CLOCK_SKEW_MS) }), lax))[0]!.reason).toBe('stale');
  });
});

describe('remoteFenceHolds (post-effect recheck)', () => {
  // Bound inside each test, not at collection: a throw while a file is collected is no failing test to Stryker's runner.
  const bind = () => remoteFenceOf(statement(), expectation);
  it('holds while every bound head is unchanged and permitting', () => {
    expect(remoteFenceHolds(bind(), statement())).toBe(true);
    expect(remoteFenceHolds([], statement())).toBe(true);
  });
  it('fails on a moved head, a non-permitting one or a missing one', () => {
    const bound = bind();
    const leaf = boundary('delegation:dlg_leaf');
    for (const b of [boundary('delegation:dlg_leaf', 2), { ...leaf, position: 2 }, { ...leaf, event_id: 'evt_other' }, { ...leaf, event_digest: `sha256:${'b'.repeat(64)}` }, null]) {
      const moved = statement();
      moved.heads[2] = { ...moved.heads[2]!, boundary: b };
      expect(remoteFenceHolds(bound, moved)).toBe(false);
    }
    const suspended = statement();
    suspended.heads[0]!.state = 'suspended';
    expect(remoteFenceHolds(bound, suspended)).toBe(false);
    expect(remoteFenceHolds(bound, statement({ heads: statement().heads.slice(1) }))).toBe(false);
  });
});

describe('the statement schemas (what a peer may send)', () => {
  it('the wire type is fixed', () => {
    expect(HEAD_STATEMENT_TYPE).toBe('baton.control_heads/v1');
  });

  it('a statement holds 1 to 256 heads and states a staleness of at most an hour', () => {
    const s = statement();
    expect(HeadStatement.parse(s)).toEqual(s);
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ ...s.heads[0]!, scope: scope('delegation', `dlg_${i}`) }));
    for (const heads of [many(1), many(256)]) expect(HeadStatement.safeParse(statement({ heads })).success).toBe(true);
    for (const heads of [[], many(257)]) expect(HeadStatement.safeParse(statement({ heads })).success).toBe(false);
    expect(HeadStatement.safeParse(statement({ max_staleness_ms: 3_600_000 })).success).toBe(true);
    expect(HeadStatement.safeParse(statement({ max_staleness_ms: 3_600_001 })).success).toBe(false);
    // An unresolved head has no boundary; unknown members are refused at every level.
    expect(HeadStatement.safeParse(statement({ heads: [{ scope: scope('agent', 'card_b'), boundary: null, state: 'unresolved' }] })).success).toBe(true);
    expect(HeadStatement.safeParse({ ...s, extra: 1 }).success).toBe(false);
    expect(HeadStatement.safeParse(statement({ heads: [{ ...s.heads[0]!, extra: 1 } as never] })).success).toBe(false);
  });

  it('a remote fence entry, as bound into a permission decision, parses back', () => {
    const fence = remoteFenceOf(statement(), expectation);
    expect(RemoteFenceEntry.array().parse(fence)).toEqual(fence);
    expect(RemoteFenceEntry.safeParse({ ...fence[0]!, extra: 1 }).success).toBe(false);
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
  it('splits after the first contract when only the root is the upstream\'s; scopes only earlier upstream contracts name are never local', () => {
    const root = contract('actor_baton_a', [scope('space', 'space_a'), scope('delegation', 'dlg_root')]);
    const s = splitChain([root, contract('actor_baton_b', [scope('delegation', 'dlg_root'), scope('delegation', 'dlg_child')])], 'actor_baton_b', 'space_b')!;
    expect(s).toEqual({ upstreamLeaf: 0, upstreamActor: 'actor_baton_a', remote: [scope('space', 'space_a'), scope('delegation', 'dlg_root')], local: [scope('space', 'space_b', 'space_b'), scope('delegation', 'dlg_child')] });
    // The upstream's leaf (index 2) dropped a scope its root named: still not this gateway's stream.
    const leaf = contract('actor_baton_a', [scope('delegation', 'dlg_leaf')]);
    const t = splitChain([contract('actor_baton_a', [scope('space', 'space_a')]), root, leaf, contract('actor_baton_b', [scope('delegation', 'dlg_child')])], 'actor_baton_b', 'space_b')!;
    expect(t.upstreamLeaf).toBe(2);
    expect(t.local).toEqual([scope('space', 'space_b', 'space_b'), scope('delegation', 'dlg_child')]);
  });
  it('a chain scope is held here under its own stream, except an agent, announced in this gateway\'s space', () => {
    expect(localStreamScope(scope('agent', 'card_b'), 'space_b')).toEqual(scope('agent', 'card_b', 'space_b'));
    expect(localStreamScope(scope('delegation', 'dlg_x'), 'space_b')).toEqual(scope('delegation', 'dlg_x'));
    expect(localStreamScope(scope('space', 'space_a'), 'space_b')).toEqual(scope('space', 'space_a'));
  });
});
