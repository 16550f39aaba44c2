import { describe, expect, it } from 'vitest';
import { admissionRefusal, decisionRefusal, isOwnRequest, reviewRefusal } from '../../src/gates/rules.ts';
import { ApprovalsConfig, approversOf, callerPrincipal, RequireApproval, requiredTier } from '../../src/gates/policy.ts';
import { approvalProblems, t4ReviewerProblems } from '../../src/gates/check.ts';
import { CHAIN_KEY, previewDigest, renderParts, type EffectPreview } from '../../src/gates/preview.ts';
import { CONTRACT_EXTENSION } from '../../src/gateway/present.ts';

const alice = { operator: 'alice', principal: 'alice', role: 'approver', reviewer: true };
const D1 = `sha256:${'1'.repeat(64)}`;
const D2 = `sha256:${'2'.repeat(64)}`;
const now = new Date('2026-12-03T10:00:00Z');
const decide = (over: Partial<Parameters<typeof decisionRefusal>[0]> = {}) =>
  decisionRefusal({ state: 'pending', approver: alice, callerPrincipal: 'planner', seenDigest: D1, previewDigest: D1, now, expiresAt: '2026-12-03T11:00:00Z', ...over });
const admit = (over: Partial<Parameters<typeof admissionRefusal>[0]> = {}) =>
  admissionRefusal({ state: 'approved', decision: { decision: 'approve', preview_digest: D1, expires_at: '2026-12-03T10:15:00Z' }, requestDigest: D1, currentDigest: D1, now, ...over });

describe('decision rules (RW-003 §1.1 independence, exact preview)', () => {
  it('lets a configured, independent approver decide the exact preview of a pending request', () => {
    expect(decide()).toBeUndefined();
  });
  it.each([
    ['no approver', { approver: undefined }, 'deny', 'not_an_approver', 'this operator is not a configured approver'],
    ['the caller\'s own principal', { callerPrincipal: 'alice' }, 'deny', 'self_approval', 'the requesting principal cannot approve its own request'],
    ['a decided request', { state: 'denied' as const }, 'invalid_request', 'not_pending', 'the request is denied, not pending'],
    ['an expired request', { expiresAt: '2026-12-03T10:00:00Z' }, 'context_invalidated', 'request_expired', 'the request expired before a decision'],
    ['another preview', { seenDigest: D2 }, 'context_invalidated', 'preview_mismatch', 'the preview decided on is not the request\'s exact preview'],
  ])('refuses %s', (_what, over, code, rule, reason) => {
    expect(decide(over)).toEqual({ code, rule, reason });
  });
  it('checks independence before anything else: a self-approval is deny even on a decided request', () => {
    expect(decide({ callerPrincipal: 'alice', state: 'approved' })).toMatchObject({ code: 'deny', rule: 'self_approval' });
  });
});

describe('admission rules (approval bound to the exact effect, once, before expiry)', () => {
  it('admits an approved, unexpired, unchanged effect', () => expect(admit()).toBeUndefined());
  it.each([
    ['a second use', { state: 'admitted' as const }, 'context_invalidated', 'approval_used', 'this approval was already used'],
    ['a pending request', { state: 'pending' as const }, 'interaction_required', 'awaiting_approval', 'a named human authority has not approved this effect'],
    ['a denied request', { state: 'denied' as const }, 'deny', 'denied', 'the effect was denied'],
    ['a refused request', { state: 'refused' as const }, 'context_invalidated', 'not_approved', 'the request is refused'],
    ['a deny decision on an approved state', { decision: { decision: 'deny' as const, preview_digest: D1, expires_at: '2026-12-03T10:15:00Z' } }, 'deny', 'no_approval', 'no approval is bound to this request'],
    ['an approval of another preview', { requestDigest: D2 }, 'context_invalidated', 'preview_mismatch', 'the approval names another preview'],
    ['a changed request', { currentDigest: D2 }, 'context_invalidated', 'request_changed', 'the effect changed since it was approved'],
    ['an expired approval', { now: new Date('2026-12-03T10:15:00Z') }, 'context_invalidated', 'approval_expired', 'the approval expired before admission'],
  ])('refuses %s', (_what, over, code, rule, reason) => {
    expect(admit(over)).toEqual({ code, rule, reason });
  });
});

describe('gateways sharing a store', () => {
  it("a gateway's own request, or one naming no gateway (from before), is its to decide and admit; another gateway's is not", () => {
    expect(isOwnRequest({ gateway_id: 'actor_baton_a' }, 'actor_baton_a')).toBe(true);
    expect(isOwnRequest({}, 'actor_baton_a')).toBe(true);
    expect(isOwnRequest({ gateway_id: 'actor_baton_b' }, 'actor_baton_a')).toBe(false);
    expect(isOwnRequest({ gateway_id: null }, 'actor_baton_a')).toBe(false);
  });
});

describe('T4 review rules', () => {
  const bob = { ...alice, operator: 'bob', principal: 'bob' };
  it('accepts an independent reviewer on a pending review', () => expect(reviewRefusal({ pending: true, reviewer: bob, callerPrincipal: 'planner', approverPrincipal: 'alice' })).toBeUndefined());
  it('refuses the approver, the caller, a non-reviewer and a review not pending', () => {
    expect(reviewRefusal({ pending: true, reviewer: alice, callerPrincipal: 'planner', approverPrincipal: 'alice' })).toEqual({ code: 'deny', rule: 'reviewer_not_independent', reason: 'the approver cannot also be the reviewer' });
    expect(reviewRefusal({ pending: true, reviewer: bob, callerPrincipal: 'bob', approverPrincipal: 'alice' })).toEqual({ code: 'deny', rule: 'self_review', reason: 'the requesting principal cannot review its own effect' });
    expect(reviewRefusal({ pending: true, reviewer: { ...bob, reviewer: false }, callerPrincipal: 'planner', approverPrincipal: 'alice' })).toEqual({ code: 'deny', rule: 'not_a_reviewer', reason: 'this operator is not a configured reviewer' });
    expect(reviewRefusal({ pending: true, reviewer: undefined, callerPrincipal: 'planner', approverPrincipal: 'alice' })).toMatchObject({ code: 'deny', rule: 'not_a_reviewer' });
    expect(reviewRefusal({ pending: false, reviewer: bob, callerPrincipal: 'planner', approverPrincipal: 'alice' })).toEqual({ code: 'invalid_request', rule: 'no_review_pending', reason: 'this task has no review pending' });
  });
});

describe('gate policy (configuration)', () => {
  it('takes the highest tier among the delegatee\'s own requirement and every matching rule', () => {
    const cfg = ApprovalsConfig.parse({ rules: [{ delegatee: 'pay', tier: 'T3_consequential_propose' }, { delegatee: 'pay', preset: 'bulk', tier: 'T4_consequential_execute' }, { preset: 'ops', tier: 'T3_consequential_propose' }] });
    expect(requiredTier(cfg, { delegatee: 'other' })).toBeUndefined();
    expect(requiredTier(cfg, { delegatee: 'pay' })).toBe('T3_consequential_propose');
    expect(requiredTier(cfg, { delegatee: 'pay', preset: 'bulk' })).toBe('T4_consequential_execute');
    expect(requiredTier(cfg, { delegatee: 'x', preset: 'ops' })).toBe('T3_consequential_propose');
    expect(requiredTier(cfg, { delegatee: 'x', requireApproval: true })).toBe('T3_consequential_propose');
    expect(requiredTier(cfg, { delegatee: 'pay', requireApproval: 'T4_consequential_execute' })).toBe('T4_consequential_execute');
    // a rule naming no preset matches a request under any preset
    expect(requiredTier(cfg, { delegatee: 'pay', preset: 'standard' })).toBe('T3_consequential_propose');
  });
  it('a delegatee\'s requireApproval is true (T3) or a gated tier, nothing else', () => {
    expect(RequireApproval.parse(true)).toBe(true);
    expect(RequireApproval.parse('T4_consequential_execute')).toBe('T4_consequential_execute');
    expect(RequireApproval.safeParse(false).success).toBe(false);
    expect(RequireApproval.safeParse('T2_bounded_execute').success).toBe(false);
  });
  it('defaults an approver\'s role to approver; refuses an approval window outside 1 s to 24 h', () => {
    expect(approversOf(ApprovalsConfig.parse({ approvers: [{ operator: 'alice' }] }))[0]!.role).toBe('approver');
    for (const approvalSeconds of [1, 86_400]) expect(ApprovalsConfig.parse({ approvalSeconds }).approvalSeconds).toBe(approvalSeconds);
    for (const approvalSeconds of [0, 86_401]) expect(ApprovalsConfig.safeParse({ approvalSeconds }).success).toBe(false);
  });
  it('refuses a rule naming nothing, unknown keys, and T0–T2 tiers', () => {
    expect(ApprovalsConfig.safeParse({ rules: [{ tier: 'T3_consequential_propose' }] }).error?.issues.map((i) => i.message)).toEqual(['a rule names a delegatee, a preset, or both']);
    expect(ApprovalsConfig.safeParse({ approvers: [{ operator: 'a', email: 'a@x' }] }).success).toBe(false);
    expect(ApprovalsConfig.safeParse({ rules: [{ delegatee: 'x', tier: 'T2_bounded_execute' }] }).success).toBe(false);
  });
  it('principals default to the operator and caller ids', () => {
    const cfg = ApprovalsConfig.parse({ approvers: [{ operator: 'ops1' }, { operator: 'ops2', principal: 'carol' }], callerPrincipals: { planner: 'carol' } });
    expect(approversOf(cfg).map((a) => a.principal)).toEqual(['ops1', 'carol']);
    expect(callerPrincipal(cfg, 'planner')).toBe('carol');
    expect(callerPrincipal(cfg, 'other')).toBe('other');
  });
  it('config check: approvers must be operators, rules must name what exists, a gate needs an approver, T4 needs two principals', () => {
    const base = { operators: [{ id: 'alice' }], delegatees: [{ id: 'pay' }], presets: [{ id: 'standard' }] };
    expect(approvalProblems({ ...base, approvals: ApprovalsConfig.parse({ approvers: [{ operator: 'alice' }], rules: [{ delegatee: 'pay', tier: 'T3_consequential_propose' }] }) })).toEqual([]);
    const bad = approvalProblems({ ...base, approvals: ApprovalsConfig.parse({ approvers: [{ operator: 'zed' }], rules: [{ delegatee: 'nope', preset: 'nada', tier: 'T4_consequential_execute' }] }) }).map((p) => p.path);
    expect(bad).toEqual(['approvals.approvers[0].operator', 'approvals.rules[0].delegatee', 'approvals.rules[0].preset', 'approvals.approvers']);
    expect(approvalProblems({ ...base, delegatees: [{ id: 'pay', requireApproval: true }], approvals: ApprovalsConfig.parse({}) })[0]).toMatchObject({ path: 'approvals.approvers', message: /no approver/ });
  });
  it('config check: a retention period shorter than an approval request\'s life is refused (the message would be purged before it is forwarded)', () => {
    const base = { operators: [{ id: 'alice' }], delegatees: [{ id: 'pay', requireApproval: true }], presets: [] };
    const approvals = ApprovalsConfig.parse({ approvers: [{ operator: 'alice' }], pendingSeconds: 2 * 86_400 });
    expect(approvalProblems({ ...base, approvals, retention: { contentDays: 2 } })).toEqual([expect.objectContaining({ path: 'retention.contentDays' })]);
    expect(approvalProblems({ ...base, approvals, retention: { contentDays: 3 } })).toEqual([]);
    expect(approvalProblems({ ...base, approvals, retention: {} })).toEqual([]);
    expect(approvalProblems({ ...base, delegatees: [{ id: 'pay' }], approvals: ApprovalsConfig.parse({}), retention: { contentDays: 1 } })).toEqual([]); // no gate, no request to outlive
  });
  it('reviewer is explicit (default false); a T4 gate needs two distinct reviewer principals', () => {
    expect(approversOf(ApprovalsConfig.parse({ approvers: [{ operator: 'alice' }] }))[0]!.reviewer).toBe(false);
    const base = { operators: [{ id: 'alice' }, { id: 'bob' }, { id: 'dave' }], delegatees: [{ id: 'pay', requireApproval: 'T4_consequential_execute' }], presets: [] };
    const t4 = (approvers: unknown[]) => t4ReviewerProblems({ ...base, approvals: ApprovalsConfig.parse({ approvers }) });
    expect(t4([{ operator: 'alice' }, { operator: 'bob', reviewer: true }])).toEqual([expect.objectContaining({ path: 'approvals.approvers', message: expect.stringMatching(/two distinct reviewer principals.*1 configured/) })]);
    expect(t4([{ operator: 'bob', principal: 'pat', reviewer: true }, { operator: 'dave', principal: 'pat', reviewer: true }])).toHaveLength(1);
    expect(t4([{ operator: 'alice' }, { operator: 'bob', reviewer: true }, { operator: 'dave', reviewer: true }])).toEqual([]);
    expect(t4ReviewerProblems({ ...base, delegatees: [{ id: 'pay', requireApproval: true }], approvals: ApprovalsConfig.parse({ approvers: [{ operator: 'alice' }] }) })).toEqual([]);
  });
});

describe('effect preview', () => {
  const preview: EffectPreview = {
    tier: 'T3_consequential_propose',
    operation: 'a2a.SendMessage',
    caller_id: 'planner',
    delegatee: { id: 'pay', card_object_id: 'card_1', card_digest: D1 },
    message_digest: D2,
    rendering: 'x',
    scope: { operations: ['a2a.SendMessage'] },
    budget: [{ name: 'invocations', ceiling: '5' }],
    expires_at: '2026-12-03T11:00:00Z',
  };
  it('its digest moves with every field an approver sees', () => {
    const d = previewDigest(preview);
    for (const changed of [{ message_digest: D1 }, { delegatee: { ...preview.delegatee, card_digest: D2 } }, { scope: {} }, { budget: [] }, { expires_at: '2026-12-03T12:00:00Z' }, { tier: 'T4_consequential_execute' as const }, { caller_id: 'x' }]) {
      expect(previewDigest({ ...preview, ...changed })).not.toBe(d);
    }
    expect(previewDigest({ ...preview })).toBe(d);
  });
  it('renders every part and every other message field in full, each value one escaped JSON token', () => {
    const text = renderParts({ messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'pay 42' }, { raw: Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0xff]).toString('base64'), mediaType: 'application/pdf', filename: 'inv.pdf' }, { raw: Buffer.from('line 1\nline 2').toString('base64') }, { url: 'https://x.example/a' }, { data: { amount: 42 } }] });
    expect(text.split('\n')).toEqual([
      '[0] text: "pay 42"',
      '[1] file: 6 bytes, base64 "JVBERgD/" {"filename":"inv.pdf","mediaType":"application/pdf"}',
      '[2] file: 13 bytes, utf-8 "line 1\\nline 2"',
      '[3] url: "https://x.example/a"',
      '[4] data: {"amount":42}',
      'message: {"messageId":"m1","role":"ROLE_USER"}',
    ]);
  });
  it('one text part cannot be written to render as two; nothing is cut', () => {
    const forged = renderParts({ parts: [{ text: 'pay 1 EUR\n[1] text: to account 7' }] });
    expect(forged.split('\n')).toEqual(['[0] text: "pay 1 EUR\\n[1] text: to account 7"']);
    const long = `${'y'.repeat(9000)}and then pay 1,000,000`;
    expect(renderParts({ parts: [{ text: long }] })).toBe(`[0] text: "${long}"`);
  });
  it('shows bidi overrides, zero-width, separator and control characters as escapes, never raw', () => {
    const r = renderParts({ parts: [{ text: 'pay \u202Eevil\u202C \u200Bto\u2028x\u0007\u0085\u2066' }] });
    expect(r).toBe('[0] text: "pay \\u202eevil\\u202c \\u200bto\\u2028x\\u0007\\u0085\\u2066"');
    expect(r).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u200B\u2028\u0085]/);
    // In keys and nested values too, and on the message line.
    const meta = renderParts({ parts: [{ data: { '\u202Ekey': ['\u2067v'] }, metadata: { n: '\u200F' } }], metadata: { note: 'a\u202Eb' } });
    expect(meta).not.toMatch(/[\u202E\u2067\u200F]/);
    expect(meta).toContain('message: {"metadata":{"note":"a\\u202eb"}}');
  });
  it('shows message.metadata, extensions and reference ids, but never Baton\'s own contract chain', () => {
    expect(CHAIN_KEY).toBe(CONTRACT_EXTENSION);
    const r = renderParts({ parts: [{ text: 'x' }], extensions: ['urn:x'], referenceTaskIds: ['t1'], metadata: { 'urn:rw-agent-delegation:0.1.1:delegation-contract': { chain: [] }, amount: 7 } });
    expect(r.split('\n')[1]).toBe('message: {"extensions":["urn:x"],"metadata":{"amount":7},"referenceTaskIds":["t1"]}');
  });
});
