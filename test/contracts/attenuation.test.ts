import { describe, expect, it } from 'vitest';
import { attenuate, compareTerms, attenuationDenied } from '../../src/contracts/attenuation.ts';
import type { Terms, TermsRequest } from '../../src/contracts/terms.ts';
import { actors, at, broadTerms, HOUR, ref } from './fixtures.ts';

const parent = broadTerms();
const dims = (req: TermsRequest, level: 'child' | 'same' = 'child'): string[] => {
  const r = attenuate(parent, req, level);
  return r.ok ? [] : [...new Set(r.failures.map((f) => f.dimension))];
};

// Each row widens exactly one rule; removing that rule makes its row pass and the test fail.
const WIDENINGS: Array<[string, TermsRequest, string]> = [
  ['resource outside the parent projects', { scope: { resources: [{ kind: 'project', project_id: 'PRJ-9' }] } }, 'objects'],
  ['object in a foreign project', { scope: { resources: [{ kind: 'object', project_id: 'PRJ-3', object_id: 'o1' }] } }, 'objects'],
  ['extra operation', { scope: { operations: ['a2a.SendMessage', 'a2a.SetTaskPushNotificationConfig'] } }, 'operations'],
  ['extra tool', { scope: { tools: ['search', 'extract'] } }, 'tools'],
  ['extra data class', { scope: { data_classes: ['public', 'restricted'] } }, 'data_classes'],
  ['extra effect class', { scope: { effect_classes: ['read', 'delete'] } }, 'effect_classes'],
  ['later expiry', { limits: { not_after: at(3 * HOUR) } }, 'expiry'],
  ['longer duration', { limits: { max_duration: { value: 121, unit: 'min' } } }, 'duration'],
  ['more invocations', { limits: { max_invocations: 11 } }, 'invocations'],
  ['more protected operations', { limits: { max_protected_operations: 101 } }, 'protected_operations'],
  ['more tokens', { limits: { max_tokens: 100_001 } }, 'tokens'],
  ['more tool calls', { limits: { max_tool_calls: 51 } }, 'tool_calls'],
  ['more retries', { limits: { max_retries: 4 } }, 'retries'],
  ['more concurrency', { limits: { max_concurrency: 5 } }, 'concurrency'],
  ['more spend', { limits: { spend: { amount_minor: '10001', currency: 'USD' } } }, 'spend'],
  ['other currency', { limits: { spend: { amount_minor: '1', currency: 'EUR' } } }, 'spend'],
  ['higher budget ceiling', { budget_ceilings: [{ name: 'tokens', unit: 'token', ceiling: '100001' }] }, 'budget'],
  ['budget with another unit', { budget_ceilings: [{ name: 'tokens', unit: 'kilotoken', ceiling: '1' }] }, 'budget'],
  ['higher autonomy tier', { autonomy: { tier: 'T4_consequential_execute' } }, 'autonomy'],
  ['dropped gate', { autonomy: { gates: [{ kind: 'pre_effect_permission' }] } }, 'gates'],
  ['dropped human authority', { human_authorities: [] }, 'human_authorities'],
  ['dropped reviewer', { reviewers: [] }, 'reviewers'],
  ['dropped consent', { consent_refs: [] }, 'consent'],
  ['dropped pre-effect check', { verification: { pre_effect_checks: [] } }, 'verification'],
  ['dropped post-effect check', { verification: { post_effect_checks: [] } }, 'verification'],
  ['dropped acceptance criterion', { verification: { acceptance_criteria: [] } }, 'verification'],
  ['dropped monitoring mode', { monitoring: { modes: ['periodic'] } }, 'monitoring'],
  ['dropped observer', { monitoring: { observers: [] } }, 'monitoring'],
  ['dropped telemetry class', { monitoring: { telemetry_classes: [] } }, 'monitoring'],
  ['dropped anomaly trigger', { monitoring: { anomaly_triggers: [] } }, 'monitoring'],
  ['dropped circuit breaker', { monitoring: { circuit_breakers: [] } }, 'monitoring'],
  ['longer heartbeat', { monitoring: { heartbeat_max_seconds: 601 } }, 'monitoring'],
  ['more retryable outcomes', { retry_policy: { retryable_outcomes: ['failed', 'unknown'] } }, 'retry_policy'],
  ['more attempts', { retry_policy: { max_attempts: 4 } }, 'retry_policy'],
  ['shorter backoff', { retry_policy: { min_backoff_ms: 999 } }, 'retry_policy'],
  ['dropped renewed-approval condition', { retry_policy: { renewed_approval_conditions: [] } }, 'retry_policy'],
  ['dropped revocation authority', { revocation: { authorities: [actors.alice] } }, 'revocation'],
  ['longer revocation ack', { revocation: { ack_timeout_seconds: 61 } }, 'revocation'],
  ['dropped read-back on revoke', { revocation: { readback_required: false } }, 'revocation'],
  ['dropped control scope', { control_scopes: [{ space_id: 'sp1', scope_kind: 'space', scope_id: 'sp1' }] }, 'control_scopes'],
  ['dropped denial', { constraints: [] }, 'constraints'],
  ['unknown constraint kind', { constraints: [...parent.constraints, { kind: 'quantum_lock' }] }, 'constraints'],
  ['depth not reduced', { subdelegation_policy: { max_remaining_depth: 3 } }, 'depth'],
  ['more descendants', { subdelegation_policy: { max_descendants: 33 } }, 'descendants'],
  ['extra eligible card', { subdelegation_policy: { eligible_delegate_cards: ['card_a', 'card_z'] } }, 'subdelegation'],
  ['dropped attestation requirement', { subdelegation_policy: { required_attestations: [] } }, 'subdelegation'],
];

describe('attenuation: every widening is refused on its own dimension', () => {
  it('the unchanged broad parent attenuates to an identical-but-one-hop-shallower child', () => {
    const r = attenuate(parent, {});
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.terms.subdelegation_policy.max_remaining_depth).toBe(2);
  });

  it.each(WIDENINGS)('%s', (_name, req, dimension) => {
    expect(dims(req)).toEqual([dimension]);
  });

  it('spend under a parent without spending authority is denied', () => {
    const noSpend: Terms = { ...parent, limits: { ...parent.limits, spend: undefined } };
    delete noSpend.limits.spend;
    const r = attenuate(noSpend, { limits: { spend: { amount_minor: '1', currency: 'USD' } } });
    expect(r.ok ? [] : r.failures).toEqual([{ dimension: 'spend', reason: 'parent has no spending authority' }]);
  });

  it('an unknown constraint already in the parent denies every child', () => {
    const odd: Terms = { ...parent, constraints: [{ kind: 'future_rule', x: 1 }] };
    expect(compareTerms(odd, odd, 'same').map((f) => f.dimension)).toEqual(['constraints']);
  });

  it('sub-delegation under a parent that denies it', () => {
    const closed: Terms = { ...parent, subdelegation_policy: { ...parent.subdelegation_policy, allowed: false, max_remaining_depth: 0 } };
    expect(compareTerms(closed, closed, 'child').map((f) => f.dimension)).toContain('subdelegation');
    expect(compareTerms(closed, closed, 'same')).toEqual([]);
  });

  it('a child may not allow sub-delegation its parent denies', () => {
    const closed: Terms = { ...parent, subdelegation_policy: { ...parent.subdelegation_policy, allowed: false, max_remaining_depth: 0 } };
    const wider: Terms = { ...closed, subdelegation_policy: { ...closed.subdelegation_policy, allowed: true } };
    expect(compareTerms(closed, wider, 'same').map((f) => f.dimension)).toEqual(['subdelegation']);
  });

  it('dropping the eligible-delegate constraint is a widening', () => {
    const { eligible_delegate_cards: _e, ...open } = parent.subdelegation_policy;
    const child: Terms = { ...parent, subdelegation_policy: { ...open, max_remaining_depth: 2 } };
    expect(compareTerms(parent, child, 'child').map((f) => f.dimension)).toEqual(['subdelegation']);
  });

  it('dropping a budget dimension is a widening; adding one is a narrowing', () => {
    const dropped: Terms = { ...attenuateOk({}), budget_ceilings: [parent.budget_ceilings[0]!] };
    expect(compareTerms(parent, dropped, 'child').map((f) => f.dimension)).toEqual(['budget']);
    expect(dims({ budget_ceilings: [{ name: 'bytes_out', unit: 'byte', ceiling: '10' }] })).toEqual([]);
  });

  it('a changed safe-stop rule is refused', () => {
    const child: Terms = { ...attenuateOk({}), revocation: { ...parent.revocation, safe_stop: 'checkpoint_and_stop' } };
    expect(compareTerms(parent, child, 'child').map((f) => f.dimension)).toEqual(['revocation']);
  });

  it('narrower selectors inside a parent project are covered', () => {
    expect(dims({ scope: { resources: [{ kind: 'object', project_id: 'PRJ-1', object_id: 'SRC-1' }, { kind: 'revision', project_id: 'PRJ-2', object_id: 'o', revision_id: 'r1' }] } })).toEqual([]);
  });

  it('reports every failing dimension at once', () => {
    const r = attenuate(parent, { scope: { tools: ['extract'] }, limits: { max_tokens: 1e6, max_retries: 9 }, consent_refs: [ref('other')] });
    expect(r.ok ? [] : r.failures.map((f) => f.dimension)).toEqual(['tools', 'tokens', 'retries', 'consent']);
  });

  it('the denial error is deny with details.failures', () => {
    const err = attenuationDenied([{ dimension: 'spend', reason: 'x' }]);
    expect(err.code).toBe('deny');
    expect(err.details.failures).toEqual([{ dimension: 'spend', reason: 'x' }]);
    // The message names each failing dimension once, in order (callers read it).
    const many = attenuationDenied([{ dimension: 'spend', reason: 'a' }, { dimension: 'depth', reason: 'b' }, { dimension: 'spend', reason: 'c' }], { revision_of: 'rev_1' });
    expect(many.message).toBe('requested authority is wider than its parent on: spend, depth');
    expect(many.details.revision_of).toBe('rev_1');
    // wider_on is the comma-joined list a caller's ErrorInfo carries (issue 25).
    expect(many.details.wider_on).toBe('spend,depth');
  });
});

// details.failures reaches the caller: each reason names what widened and the parent's bound.
describe('attenuation: each failure says what widened', () => {
  const reasons = (req: TermsRequest): unknown => {
    const r = attenuate(parent, req);
    return r.ok ? 'ok' : r.failures;
  };

  it.each<[TermsRequest, string, string]>([
    [{ scope: { resources: [{ kind: 'project', project_id: 'PRJ-9' }] } }, 'objects', 'not within parent resources: {"kind":"project","project_id":"PRJ-9"}'],
    [{ scope: { tools: ['search', 'extract'] } }, 'tools', 'not granted by parent: extract'],
    [{ limits: { not_after: at(3 * HOUR) } }, 'expiry', `not_after ${at(3 * HOUR)} is later than parent ${at(2 * HOUR)}`],
    [{ limits: { max_invocations: 11 } }, 'invocations', '11 exceeds parent 10'],
    [{ budget_ceilings: [{ name: 'tokens', unit: 'token', ceiling: '100001' }] }, 'budget', 'tokens 100001 exceeds parent 100000'],
    [{ budget_ceilings: [{ name: 'tokens', unit: 'kilotoken', ceiling: '1' }] }, 'budget', 'tokens unit kilotoken differs from parent token'],
    [{ autonomy: { tier: 'T4_consequential_execute' } }, 'autonomy', 'T4_consequential_execute is above parent T2_bounded_execute'],
    [{ autonomy: { gates: [{ kind: 'pre_effect_permission' }] } }, 'gates', 'drops inherited: {"kind":"reviewer"}'],
    [{ retry_policy: { min_backoff_ms: 999 } }, 'retry_policy', 'backoff is shorter than parent'],
    [{ revocation: { readback_required: false } }, 'revocation', 'drops required read-back'],
    [{ constraints: [...parent.constraints, { kind: 'quantum_lock' }, { kind: 'quantum_lock' }, { kind: 'zeno' }] }, 'constraints', 'unknown constraint kind: quantum_lock, zeno'],
    [{ subdelegation_policy: { max_remaining_depth: 3 } }, 'depth', 'remaining depth 3 exceeds 2'],
  ])('%j → %s: %s', (req, dimension, reason) => {
    expect(reasons(req)).toStrictEqual([{ dimension, reason }]);
  });

  it('names a changed safe-stop rule', () => {
    const child: Terms = { ...parent, revocation: { ...parent.revocation, safe_stop: 'hard_stop' as never } };
    expect(compareTerms(parent, child, 'same')).toStrictEqual([{ dimension: 'revocation', reason: 'changes the safe-stop rule' }]);
  });

  it('names the missing ceiling when a budget dimension is dropped', () => {
    const child = { ...parent, budget_ceilings: parent.budget_ceilings.slice(1) };
    expect(compareTerms(parent, child, 'same')).toStrictEqual([{ dimension: 'budget', reason: 'drops ceiling tokens' }]);
  });

  it('sub-delegation refusals name the rule', () => {
    const closed: Terms = { ...parent, subdelegation_policy: { ...parent.subdelegation_policy, allowed: false, max_remaining_depth: 0 } };
    expect(compareTerms(closed, { ...closed, subdelegation_policy: { ...closed.subdelegation_policy, allowed: true } }, 'child')).toStrictEqual([
      { dimension: 'subdelegation', reason: 'parent does not allow sub-delegation' },
      { dimension: 'subdelegation', reason: 'allows sub-delegation the parent denies' },
    ]);
    // At depth 0 a child hop's bound is 0, never negative.
    expect(compareTerms(closed, { ...closed, subdelegation_policy: { ...closed.subdelegation_policy, max_remaining_depth: 1 } }, 'child')).toContainEqual({
      dimension: 'depth',
      reason: 'remaining depth 1 exceeds 0',
    });
    const { eligible_delegate_cards: _e, ...open } = parent.subdelegation_policy;
    expect(compareTerms(parent, { ...parent, subdelegation_policy: { ...open, max_remaining_depth: 2 } }, 'child')).toStrictEqual([
      { dimension: 'subdelegation', reason: 'drops the eligible-delegate constraint' },
    ]);
  });

  it('lists at most eight offending members', () => {
    const many = Array.from({ length: 10 }, (_, i) => `t${i}`);
    const first8 = many.slice(0, 8).join(', ');
    const wide: Terms = {
      ...parent,
      scope: { ...parent.scope, tools: many, resources: many.map((project_id) => ({ kind: 'project', project_id })) },
    };
    expect(compareTerms(parent, wide, 'same')).toStrictEqual([
      { dimension: 'objects', reason: `not within parent resources: ${many.slice(0, 8).map((p) => `{"kind":"project","project_id":"${p}"}`).join(', ')}` },
      { dimension: 'tools', reason: `not granted by parent: ${first8}` },
    ]);
    const strict: Terms = { ...parent, verification: { ...parent.verification, pre_effect_checks: many } };
    expect(compareTerms(strict, parent, 'same')).toStrictEqual([{ dimension: 'verification', reason: `drops inherited: ${first8}` }]);
  });
});

describe('attenuation: omitted fields inherit the parent constraint', () => {
  it('omitted spend inherits the parent spend, null asks for none', () => {
    expect(attenuateOk({}).limits.spend).toEqual(parent.limits.spend);
    expect(attenuateOk({ limits: { spend: null } }).limits.spend).toBeUndefined();
  });

  it('omitted obligations and limits are the parent values', () => {
    const child = attenuateOk({ scope: { operations: ['a2a.GetTask'] } });
    expect(child.scope.resources).toEqual(parent.scope.resources);
    expect(child.human_authorities).toEqual(parent.human_authorities);
    expect(child.consent_refs).toEqual(parent.consent_refs);
    expect(child.monitoring).toEqual(parent.monitoring);
    expect(child.constraints).toEqual(parent.constraints);
    expect(child.limits.not_after).toBe(parent.limits.not_after);
    expect(child.budget_ceilings).toEqual(parent.budget_ceilings);
  });

  it('an explicitly undefined member does not clear an inherited value', () => {
    const child = attenuateOk({ scope: { operations: undefined }, limits: { max_tokens: undefined } });
    expect(child.scope.operations).toEqual(parent.scope.operations);
    expect(child.limits.max_tokens).toBe(parent.limits.max_tokens);
  });

  it('a budget list naming one dimension inherits the others', () => {
    const child = attenuateOk({ budget_ceilings: [{ name: 'tokens', unit: 'token', ceiling: '5' }] });
    expect(child.budget_ceilings).toEqual([{ name: 'tokens', unit: 'token', ceiling: '5' }, parent.budget_ceilings[1]]);
  });

  it('remaining depth defaults to one less; at zero, sub-delegation turns off', () => {
    const one: Terms = { ...parent, subdelegation_policy: { ...parent.subdelegation_policy, max_remaining_depth: 1 } };
    const r = attenuate(one, {});
    expect(r.ok && r.terms.subdelegation_policy).toMatchObject({ allowed: false, max_remaining_depth: 0 });
  });
});

function attenuateOk(req: TermsRequest): Terms {
  const r = attenuate(parent, req);
  if (!r.ok) throw new Error(JSON.stringify(r.failures));
  return r.terms;
}
