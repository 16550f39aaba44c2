/** RW-003 §11 worked examples as executable cases. */
import { describe, expect, it } from 'vitest';
import type { OperationRequest } from '../../src/contracts/admission.ts';
import type { EntryPointProfile } from '../../src/contracts/issuance.ts';
import { reviseChild } from '../../src/contracts/mint.ts';
import { definePreset } from '../../src/contracts/presets.ts';
import type { ScopeRegistry } from '../../src/contracts/scope.ts';
import { refOf } from '../../src/records/envelope.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { actors, at, broadTerms, childRequest, delegatees, HOUR, machinePresetRaw, world, type World } from './fixtures.ts';

const RW: ScopeRegistry = {
  operations: new Map([
    ['rw.source.read', { effect_class: 'read' }],
    ['rw.source.stage', { effect_class: 'reversible_mutation' }],
    ['rw.proposal.create', { effect_class: 'proposal' }],
    ['rw.corpus.include', { effect_class: 'canonical_mutation' }],
    ['rw.hypothesis.promote', { effect_class: 'canonical_mutation' }],
    ['rw.verdict.issue', { effect_class: 'canonical_mutation' }],
    ['rw.object.delete', { effect_class: 'delete' }],
    ['rw.publish', { effect_class: 'external_publication' }],
  ]),
  tools: new Set(['extract', 'search']),
};

function rwPreset(terms: Record<string, unknown>, extra: Record<string, unknown> = {}): EntryPointProfile {
  const base = machinePresetRaw() as { terms: Record<string, unknown> };
  return { path: 'owner_preset', preset: definePreset({ ...base, ...extra, terms: { ...base.terms, ...terms } }, { maxLifetimeSeconds: 7200 }) };
}
const issueRw = (w: World, profile: EntryPointProfile, request: Record<string, unknown> = {}) =>
  w.issue(request, profile, { ...w.issuanceDeps, registry: RW });
const read = (revision: string): OperationRequest => ({
  operation: 'rw.source.read',
  resource: { kind: 'revision', project_id: 'PRJ-1', object_id: 'SRC-1', revision_id: revision },
  effect_class: 'read',
  data_class: 'public',
});
const dims = (failures: unknown): string[] => [...new Set((failures as Array<{ dimension: string }>).map((f) => f.dimension))].sort();

describe('RW-003 §11.1 atomic extraction task', () => {
  const noSub = { allowed: false, max_remaining_depth: 0, max_descendants: 0, required_attestations: ['contract_signature'] };
  const extract = rwPreset({
    scope: {
      operations: ['rw.source.read', 'rw.proposal.create'],
      tools: ['extract'],
      resources: [{ kind: 'revision', project_id: 'PRJ-1', object_id: 'SRC-1', revision_id: 'r1' }, { kind: 'object', project_id: 'PRJ-1', object_id: 'proposals' }],
      data_classes: ['public'],
      effect_classes: ['read', 'proposal'],
    },
    limits: { lifetime_seconds: 3600, max_duration: { value: 90, unit: 's' }, max_invocations: 1, max_protected_operations: 10, max_tokens: 20_000, max_tool_calls: 5, max_retries: 0, max_concurrency: 1 },
    budget_ceilings: [{ name: 'tokens', unit: 'token', ceiling: '20000' }, { name: 'tool_calls', unit: 'call', ceiling: '5' }],
    autonomy: { tier: 'T1_draft', gates: [{ kind: 'automated_scope_check' }, { kind: 'provenance_check' }] },
    subdelegation_policy: noSub,
  });

  it('D-EXTRACT-1: reads only SRC-1@r1, drafts proposals, zero spend, no sub-delegation', async () => {
    const w = await world();
    const { contract } = await issueRw(w, extract, { objective: { text: 'Extract one quote from SRC-1@r1', type: 'extract_quote' } });
    const b = contract.body;
    expect(b.autonomy.tier).toBe('T1_draft');
    expect(b.limits).toMatchObject({ max_duration: { value: 90, unit: 's' }, max_tokens: 20_000, max_tool_calls: 5 });
    expect(b.limits.spend).toBeUndefined();
    const ev = await w.evaluate(refOf(contract), read('r1'));
    // Fences: Space policy, extractor Agent Card, and D-EXTRACT-1 streams.
    for (const kind of ['policy', 'agent', 'delegation']) expect(ev.fenceScopes.some((s) => s.scope_kind === kind)).toBe(true);
    await expect(w.evaluate(refOf(contract), { ...read('r1'), operation: 'rw.proposal.create', effect_class: 'proposal', resource: { kind: 'object', project_id: 'PRJ-1', object_id: 'proposals' } })).resolves.toBeDefined();
    await expectCodeAsync(w.evaluate(refOf(contract), read('r2')), 'deny');
    const corpus = await expectCodeAsync(w.evaluate(refOf(contract), { ...read('r1'), operation: 'rw.corpus.include', effect_class: 'canonical_mutation' }), 'deny');
    expect(dims(corpus.details.failures)).toEqual(['effect_classes', 'operations']);
    expect(dims((await expectCodeAsync(w.mint(refOf(contract), childRequest('b'), actors.agentA), 'deny')).details.failures)).toContain('subdelegation');
    await expectCodeAsync(issueRw(w, extract, { objective: { text: 'x', type: 'extract_quote' }, terms: { limits: { spend: { amount_minor: '1', currency: 'USD' } } } }), 'deny');
  });
});

describe('RW-003 §11.2 supervised research task', () => {
  const research = rwPreset({
    scope: {
      operations: ['rw.source.read', 'rw.source.stage', 'rw.proposal.create'],
      tools: ['search'],
      resources: [{ kind: 'project', project_id: 'PRJ-1' }],
      data_classes: ['public'],
      effect_classes: ['read', 'reversible_mutation', 'proposal'],
    },
    budget_ceilings: [{ name: 'sources', unit: 'source', ceiling: '3' }, { name: 'proposed_findings', unit: 'finding', ceiling: '10' }],
    human_authorities: [{ principal_id: 'pr_pi', role: 'corpus_inclusion' }],
    reviewers: [{ role: 'citation_verifier', independence: 'named_principal', principal_id: 'pr_verifier' }],
    verification: { pre_effect_checks: ['scope', 'fences'], post_effect_checks: ['citations'], acceptance_criteria: ['findings_schema'] },
    monitoring: { ...broadTerms().monitoring, modes: ['periodic', 'pre_effect'], heartbeat_max_seconds: 1800 },
    constraints: ['rw.corpus.include', 'rw.hypothesis.promote', 'rw.verdict.issue', 'rw.publish'].map((operation) => ({ kind: 'deny_operation', operation })),
  });

  it('D-RESEARCH-1: public-only, two-hour expiry, 30-minute checkpoints, human decides corpus inclusion', async () => {
    const w = await world();
    const { contract } = await issueRw(w, research);
    const b = contract.body;
    expect(b.autonomy.tier).toBe('T2_bounded_execute');
    expect(b.limits.not_after).toBe(at(2 * HOUR));
    expect(b.monitoring).toMatchObject({ modes: ['periodic', 'pre_effect'], heartbeat_max_seconds: 1800 });
    expect(b.budget_ceilings.map((d) => [d.name, d.ceiling])).toEqual([['sources', '3'], ['proposed_findings', '10']]);
    const stage = { ...read('r1'), operation: 'rw.source.stage', effect_class: 'reversible_mutation' } as const;
    // Each checkpoint resume re-evaluates the chain against the current clock and heads.
    for (let t = 0; t < 4; t++) {
      await expect(w.evaluate(refOf(contract), stage)).resolves.toBeDefined();
      w.clock.advance(30 * 60_000);
    }
    await expectCodeAsync(w.evaluate(refOf(contract), stage), 'context_invalidated');
  });

  it('corpus inclusion, confidential data and dropping the human authority are refused', async () => {
    const w = await world();
    const { contract } = await issueRw(w, research);
    await expectCodeAsync(w.evaluate(refOf(contract), { ...read('r1'), data_class: 'confidential' }), 'deny');
    await expectCodeAsync(w.evaluate(refOf(contract), { ...read('r1'), operation: 'rw.corpus.include', effect_class: 'canonical_mutation' }), 'deny');
    const err = await expectCodeAsync(w.mint(refOf(contract), childRequest('b', { human_authorities: [], reviewers: [] }), actors.agentA), 'deny');
    expect(dims(err.details.failures)).toEqual(['human_authorities', 'reviewers']);
  });
});

describe('RW-003 §11.3 rejected overbroad delegation', () => {
  it('D-CHILD-BAD fails on objects, operations, duration, depth, effect class and spend; nothing becomes active', async () => {
    const w = await world();
    const parentProfile = rwPreset(
      {
        scope: { operations: ['rw.source.read', 'rw.proposal.create'], tools: [], resources: [{ kind: 'project', project_id: 'PRJ-1' }], data_classes: ['public'], effect_classes: ['read', 'proposal'] },
        limits: { lifetime_seconds: 7200, max_duration: { value: 2, unit: 'h' }, max_invocations: 10, max_protected_operations: 100, max_tokens: 1000, max_tool_calls: 10, max_retries: 1, max_concurrency: 2 },
        subdelegation_policy: { allowed: true, max_remaining_depth: 1, max_descendants: 32, required_attestations: ['contract_signature'] },
        constraints: [{ kind: 'deny_effect_class', effect_class: 'external_publication' }],
      },
    );
    const parent = (await issueRw(w, parentProfile, { objective: { text: 'D-PARENT-1', type: 'evidence_search' } })).contract;
    expect(parent.body.limits.spend).toBeUndefined();
    const before = await w.store.listRevisions(parent.record_id);
    const bad = childRequest('b', {
      scope: {
        operations: ['rw.source.read', 'rw.proposal.create', 'rw.object.delete', 'rw.publish'],
        resources: ['PRJ-1', 'PRJ-2', 'PRJ-3'].map((project_id) => ({ kind: 'project', project_id })),
        effect_classes: ['read', 'proposal', 'delete', 'external_publication'],
      },
      limits: { max_duration: { value: 1_000_000_000, unit: 'd' }, spend: { amount_minor: '10000', currency: 'USD' } },
      subdelegation_policy: { allowed: true, max_remaining_depth: 3 },
    });
    const err = await expectCodeAsync(w.mint(refOf(parent), bad, actors.agentA), 'deny');
    expect(dims(err.details.failures)).toEqual(['depth', 'duration', 'effect_classes', 'objects', 'operations', 'spend'].sort());
    // No child contract becomes active.
    expect(w.descendants.size).toBe(0);
    expect(await w.store.listRevisions(parent.record_id)).toEqual(before);
  });
});

describe('RW-003 §11.4 mid-execution reassignment (reviseChild, as the operator API runs it)', () => {
  /** A root for AGENT-A and the child D-RESEARCH-2@r1 it delegated to AGENT-C. */
  async function assigned(w: World, root: Record<string, unknown> = {}) {
    const r = (await w.issue(root)).contract;
    const r1 = (await w.mint(refOf(r), childRequest('c', { budget_ceilings: [{ name: 'tokens', unit: 'token', ceiling: '50000' }] }), actors.agentA)).contract;
    return { root: r, r1, parent: await w.evaluate(refOf(r)) };
  }
  const noBudget = new Map<string, bigint>();

  it('D-RESEARCH-2@r2 reassigns to AGENT-B with narrower scope and the remaining budget; the r1 binding and its descendants go stale', async () => {
    const w = await world();
    const { r1, parent } = await assigned(w);
    const underR1 = await w.mint(refOf(r1), childRequest('a'), actors.agentC);
    w.clock.advance(10 * 60_000);
    // 30000 tokens left of the delegation's 50000: the revision may not carry more.
    const r2 = await reviseChild(parent, r1, childRequest('b'), new Map([['tokens', 30_000n]]), actors.agentA, w.mintDeps);
    await w.store.putRecord(r2 as never);
    expect(r2.record_id).toBe(r1.record_id);
    expect(r2.body.delegation_id).toBe(r1.body.delegation_id);
    expect(r2.prior_revision_ref).toEqual(refOf(r1));
    expect(r2.body.delegatee_agent_ref).toEqual({ card_ref: delegatees.b.card_ref, actor_ref: delegatees.b.actor_ref });
    expect(r2.body.accountable_operator_ref).toEqual(delegatees.b.operator_ref);
    expect(r2.body.budget_ceilings).toContainEqual({ name: 'tokens', unit: 'token', ceiling: '30000' });
    // The new delegatee's agent stream replaces the old one; every other fenced scope stays.
    expect(r2.body.control_scopes).toContainEqual({ space_id: 'sp1', scope_kind: 'agent', scope_id: 'card_b' });
    expect(r2.body.control_scopes).not.toContainEqual({ space_id: 'sp1', scope_kind: 'agent', scope_id: 'card_c' });
    expect(r2.body.control_scopes).toContainEqual({ space_id: 'sp1', scope_kind: 'policy', scope_id: 'pol-1' });
    // History is kept; the stale head fails the compare; the new revision admits.
    expect((await w.store.listRevisions(r1.record_id)).map((r) => r.revision_id)).toEqual([r1.revision_id, r2.revision_id]);
    expect((await expectCodeAsync(w.evaluate(refOf(r1)), 'context_invalidated')).details.reason).toBe('stale_revision');
    expect((await expectCodeAsync(w.evaluate(refOf(underR1.contract)), 'context_invalidated')).details).toMatchObject({ reason: 'stale_revision' });
    await expect(w.evaluate(refOf(r2))).resolves.toBeDefined();
  });

  it('a remaining budget above the ceiling leaves the ceiling as it was', async () => {
    const w = await world();
    const { r1, parent } = await assigned(w);
    const r2 = await reviseChild(parent, r1, childRequest('b'), new Map([['tokens', 90_000n]]), actors.agentA, w.mintDeps);
    expect(r2.body.budget_ceilings).toContainEqual({ name: 'tokens', unit: 'token', ceiling: '50000' });
  });

  it('a reassignment may not widen the revision it replaces, and only the parent\'s delegatee may reassign', async () => {
    const w = await world();
    const { r1, parent } = await assigned(w);
    const wider = await expectCodeAsync(
      reviseChild(parent, r1, childRequest('b', { budget_ceilings: [{ name: 'tokens', unit: 'token', ceiling: '60000' }] }), noBudget, actors.agentA, w.mintDeps),
      'deny',
    );
    expect(dims(wider.details.failures)).toEqual(['budget']);
    expect(wider.details.revision_of).toBe(r1.revision_id);
    await expectCodeAsync(reviseChild(parent, r1, childRequest('b'), noBudget, actors.alice, w.mintDeps), 'invalid_request');
    await expectCodeAsync(reviseChild(parent, r1, { delegatee: delegatees.b }, noBudget, actors.agentA, w.mintDeps), 'invalid_request');
  });

  it('the revision must stay under the same parent revision', async () => {
    const w = await world();
    const { r1 } = await assigned(w);
    const other = (await w.issue()).contract;
    const err = await expectCodeAsync(reviseChild(await w.evaluate(refOf(other)), r1, childRequest('b'), noBudget, actors.agentA, w.mintDeps), 'invalid_request');
    expect(err.message).toContain('same parent');
  });

  it('a reassigned child must stay a valid hop under its parent', async () => {
    const w = await world();
    const { r1, parent } = await assigned(w, { terms: { subdelegation_policy: { eligible_delegate_cards: ['card_c'] } } });
    const err = await expectCodeAsync(reviseChild(parent, r1, childRequest('b'), noBudget, actors.agentA, w.mintDeps), 'deny');
    expect(dims(err.details.failures)).toEqual(['delegatee']);
  });
});
