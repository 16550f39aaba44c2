import { describe, expect, it } from 'vitest';
import { mintChild } from '../../src/contracts/mint.ts';
import { definePreset } from '../../src/contracts/presets.ts';
import { refOf } from '../../src/records/envelope.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { actors, at, childRequest, delegatees, HOUR, machinePresetRaw, world } from './fixtures.ts';

describe('child minting', () => {
  it('mints a signed child one hop deeper, sharing the root ledger, with the parent chain embedded', async () => {
    const w = await world();
    const root = await w.issue();
    const child = await w.mint(refOf(root.contract), childRequest('b', { scope: { operations: ['a2a.GetTask'] } }), actors.agentA);
    const b = child.contract.body;
    expect(b.lineage).toMatchObject({ kind: 'child', parent_ref: refOf(root.contract), root_ref: refOf(root.contract), depth: 1 });
    expect(b.subdelegation_policy.max_remaining_depth).toBe(2);
    expect(b.ledger_ref).toBe(root.contract.body.ledger_ref);
    expect(b.issuer_binding).toEqual(root.contract.body.issuer_binding);
    expect(b.principal_binding).toEqual(root.contract.body.principal_binding);
    expect(b.owner).toEqual(root.contract.body.owner);
    expect(b.delegator_actor_ref).toEqual(actors.agentA);
    expect(b.ancestry).toEqual(root.chain.links);
    expect(child.chain.links.map((l) => l.contract_ref)).toEqual([refOf(root.contract), refOf(child.contract)]);
    // Every ancestor delegation stream is fenced by the child (RW-003 §1.2, §8).
    expect(b.control_scopes).toEqual(expect.arrayContaining(root.contract.body.control_scopes));
    expect(b.control_scopes).toContainEqual({ space_id: 'sp1', scope_kind: 'delegation', scope_id: child.contract.record_id });
  });

  it('a child that omits constrained fields inherits them', async () => {
    const w = await world();
    const root = await w.issue();
    const { contract } = await w.mint(refOf(root.contract), childRequest('b'), actors.agentA);
    const p = root.contract.body;
    for (const k of ['scope', 'budget_ceilings', 'human_authorities', 'reviewers', 'consent_refs', 'verification', 'monitoring', 'revocation', 'constraints', 'autonomy'] as const) {
      expect(contract.body[k]).toEqual(p[k]);
    }
    expect(contract.body.limits).toEqual(p.limits);
  });

  it('the grandchild expiry is bounded by every ancestor', async () => {
    const w = await world();
    const root = await w.issue();
    const child = await w.mint(refOf(root.contract), childRequest('b', { limits: { not_after: at(HOUR) } }), actors.agentA);
    const err = await expectCodeAsync(w.mint(refOf(child.contract), childRequest('c', { limits: { not_after: at(1.5 * HOUR) } }), actors.agentB), 'deny');
    expect(err.details.failures).toEqual([expect.objectContaining({ dimension: 'expiry' })]);
  });

  it('only the parent delegatee may delegate; a forged delegator is invalid_request', async () => {
    const w = await world();
    const root = await w.issue();
    await expectCodeAsync(w.mint(refOf(root.contract), childRequest('b'), actors.mallory), 'invalid_request');
  });

  it('agent-supplied lineage, issuer or subject fields are rejected', async () => {
    const w = await world();
    const root = await w.issue();
    for (const extra of [{ lineage: {} }, { issuer_binding: {} }, { principal_binding: {} }, { ancestry: [] }, { ledger_ref: 'ledger_mine' }]) {
      await expectCodeAsync(w.mint(refOf(root.contract), { ...childRequest('b'), ...extra }, actors.agentA), 'invalid_request');
    }
  });

  it('an ineligible delegatee card is denied', async () => {
    const w = await world();
    const root = await w.issue({ terms: { subdelegation_policy: { eligible_delegate_cards: ['card_b'] } } });
    const err = await expectCodeAsync(w.mint(refOf(root.contract), childRequest('c'), actors.agentA), 'deny');
    expect(err.details.failures).toEqual([expect.objectContaining({ dimension: 'delegatee' })]);
  });

  it('the descendant count per root is limit_exceeded at 32', async () => {
    const w = await world();
    const root = await w.issue();
    w.descendants.set(root.contract.record_id, 32);
    const err = await expectCodeAsync(w.mint(refOf(root.contract), childRequest('b'), actors.agentA), 'limit_exceeded');
    expect(err.details.bound).toBe('descendants');
  });

  it('4 hops is the root maximum: a fifth is refused', async () => {
    const w = await world();
    const preset = definePreset(
      machinePresetRaw({ eligible_delegatees: [delegatees.a, delegatees.b, delegatees.c] } as never),
      { maxLifetimeSeconds: 7200 },
    );
    const raw = preset.terms.subdelegation_policy;
    const deep = definePreset({ ...preset, terms: { ...preset.terms, subdelegation_policy: { ...raw, max_remaining_depth: 4 } } }, { maxLifetimeSeconds: 7200 });
    let parent = (await w.issue({}, { path: 'owner_preset', preset: deep })).contract;
    const order: Array<'a' | 'b' | 'c'> = ['a', 'b', 'c', 'a', 'b'];
    for (let hop = 1; hop <= 4; hop++) {
      const actor = delegatees[order[hop - 1]!].actor_ref;
      parent = (await w.mint(refOf(parent), childRequest(order[hop]!), actor)).contract;
      expect(parent.body.lineage.depth).toBe(hop);
    }
    expect(parent.body.subdelegation_policy).toMatchObject({ allowed: false, max_remaining_depth: 0 });
    const err = await expectCodeAsync(w.mint(refOf(parent), childRequest('c'), delegatees.b.actor_ref), 'limit_exceeded');
    expect(err.details.bound).toBe('depth');
  });

  it('a parent that denies sub-delegation denies every child', async () => {
    const w = await world();
    const root = await w.issue({ terms: { subdelegation_policy: { allowed: false, max_remaining_depth: 0 } } });
    const err = await expectCodeAsync(w.mint(refOf(root.contract), childRequest('b'), actors.agentA), 'deny');
    expect((err.details.failures as Array<{ dimension: string }>).map((f) => f.dimension)).toContain('subdelegation');
  });

  it('an unknown member like scope_override in the parent body cannot widen the child', async () => {
    const w = await world();
    const root = await w.issue();
    const chain = await w.evaluate(refOf(root.contract));
    // Evaluated contracts are frozen (issue #15), so the widened leaf is a copy put in its place.
    const leaf = structuredClone(chain.leaf) as unknown as { body: Record<string, unknown> };
    leaf.body.scope_override = { operations: ['a2a.SetTaskPushNotificationConfig'], effect_classes: ['delete'] };
    const widened = { ...chain, leaf: leaf as unknown as typeof chain.leaf };
    const err = await expectCodeAsync(
      mintChild(widened, childRequest('b', { scope: { operations: ['a2a.SetTaskPushNotificationConfig'] } }), actors.agentA, w.mintDeps),
      'deny',
    );
    expect(err.details.failures).toEqual([expect.objectContaining({ dimension: 'operations' })]);
  });

  it('a child of an expired parent cannot be minted', async () => {
    const w = await world();
    const root = await w.issue();
    w.clock.advance(2 * HOUR);
    await expectCodeAsync(w.mint(refOf(root.contract), childRequest('b'), actors.agentA), 'context_invalidated');
  });
});
