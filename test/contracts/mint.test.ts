import { describe, expect, it } from 'vitest';
import { mintChild, reviseChild } from '../../src/contracts/mint.ts';
import { definePreset } from '../../src/contracts/presets.ts';
import canonicalize from 'canonicalize';
import { parseContract } from '../../src/contracts/model.ts';
import { verifyRecordSignatures } from '../../src/contracts/signing.ts';
import { canonicalText } from '../../src/records/canonical.ts';
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

  it('issued and minted contracts are what parsing their stored form gives (issue #15: not re-parsed in process)', async () => {
    const w = await world();
    const root = await w.issue();
    const child = await w.mint(refOf(root.contract), childRequest('b'), actors.agentA);
    for (const c of [root.contract, child.contract]) {
      expect(parseContract(c)).toBe(c);
      const stored = JSON.parse(canonicalText(c)) as unknown;
      expect(parseContract(stored)).toStrictEqual(c);
      expect(canonicalText(parseContract(stored))).toBe(canonicalize(stored));
      await verifyRecordSignatures(parseContract(stored), w.resolveSignerKey);
    }
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
    expect([err.message, err.details]).toStrictEqual(['delegation would exceed the root maximum depth', { bound: 'depth', root_max_depth: 4 }]);
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

// Surviving mutants of issue #19: what a child and a revision carry, and each refusal's own message.
describe('mintChild and reviseChild: what they carry and how they refuse', () => {
  it("a child carries the request's purpose text, and none when the request gives none", async () => {
    const w = await world();
    const root = await w.issue();
    const withPurpose = await w.mint(refOf(root.contract), { ...childRequest('b'), purpose: 'audit trail for claim C-1' }, actors.agentA);
    expect(withPurpose.contract.body.purpose).toBe('audit trail for claim C-1');
    const without = await w.mint(refOf(root.contract), childRequest('b'), actors.agentA);
    expect('purpose' in without.contract.body).toBe(false);
  });

  it('refusals name their rule and bound', async () => {
    const w = await world();
    const root = await w.issue();
    const chain = await w.evaluate(refOf(root.contract));
    const malformed = await expectCodeAsync(mintChild(chain, { delegatee: delegatees.b }, actors.agentA, w.mintDeps), 'invalid_request');
    expect(malformed.message).toBe('child request is malformed');
    expect(malformed.details.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'objective' })]));
    const forged = await expectCodeAsync(mintChild(chain, childRequest('b'), actors.mallory, w.mintDeps), 'invalid_request');
    expect(forged.message).toBe("only the parent's delegatee may delegate under it");
    w.descendants.set(root.contract.record_id, 32);
    const full = await expectCodeAsync(w.mint(refOf(root.contract), childRequest('b'), actors.agentA), 'limit_exceeded');
    expect([full.message, full.details]).toStrictEqual(['root has reached its descendant limit', { bound: 'descendants', root_max_descendants: 32 }]);
  });

  async function assigned() {
    const w = await world();
    const r = (await w.issue()).contract;
    const r1 = (await w.mint(refOf(r), childRequest('c'), actors.agentA)).contract;
    return { w, r1, parent: await w.evaluate(refOf(r)) };
  }

  it('a revision keeps its remaining depth (it is the same hop, not a deeper one) and every non-agent scope', async () => {
    const { w, r1, parent } = await assigned();
    const r2 = await reviseChild(parent, r1, childRequest('b'), new Map(), actors.agentA, w.mintDeps);
    expect(r2.body.subdelegation_policy).toStrictEqual(r1.body.subdelegation_policy);
    const swap = (s: { scope_kind: string; scope_id: string }) => (s.scope_kind === 'agent' && s.scope_id === 'card_c' ? { ...s, scope_id: 'card_b' } : s);
    const key = (s: object) => JSON.stringify(s);
    expect(r2.body.control_scopes.map(key).sort()).toEqual(r1.body.control_scopes.map(swap).map(key).sort());
    expect(r2.body.lineage).toStrictEqual(r1.body.lineage);
  });

  it('a revision keeps a non-agent scope whose id happens to equal the old card id', async () => {
    const w = await world();
    const odd = { space_id: 'sp1', scope_kind: 'policy', scope_id: 'card_c' } as const;
    const r = (await w.issue({ terms: { control_scopes: [...w.preset.terms.control_scopes, odd] } })).contract;
    const r1 = (await w.mint(refOf(r), childRequest('c'), actors.agentA)).contract;
    expect(r1.body.control_scopes).toContainEqual(odd);
    const r2 = await reviseChild(await w.evaluate(refOf(r)), r1, childRequest('b'), new Map(), actors.agentA, w.mintDeps);
    expect(r2.body.control_scopes).toContainEqual(odd);
    expect(r2.body.control_scopes).not.toContainEqual({ space_id: 'sp1', scope_kind: 'agent', scope_id: 'card_c' });
  });

  it('a child delegation id and a revised one are fresh dlg ids, then the same id', async () => {
    const w = await world();
    const r = (await w.issue()).contract;
    expect(r.record_id).toMatch(/^dlg_/);
    const r1 = (await w.mint(refOf(r), childRequest('c'), actors.agentA)).contract;
    expect(r1.record_id).toMatch(/^dlg_/);
    expect(r1.body.ledger_ref).toMatch(/^ledger_/);
    const r2 = await reviseChild(await w.evaluate(refOf(r)), r1, childRequest('b'), new Map(), actors.agentA, w.mintDeps);
    expect(r2.record_id).toBe(r1.record_id);
  });

  it("a dimension the remaining budget does not name keeps the revision's ceiling", async () => {
    const { w, r1, parent } = await assigned();
    const r2 = await reviseChild(parent, r1, childRequest('b'), new Map([['operations', 7n]]), actors.agentA, w.mintDeps);
    expect(r2.body.budget_ceilings).toStrictEqual(
      r1.body.budget_ceilings.map((b) => (b.name === 'operations' ? { ...b, ceiling: '7' } : b)),
    );
  });

  it('revision refusals name their rule', async () => {
    const { w, r1, parent } = await assigned();
    const malformed = await expectCodeAsync(reviseChild(parent, r1, { delegatee: delegatees.b }, new Map(), actors.agentA, w.mintDeps), 'invalid_request');
    expect(malformed.message).toBe('revision request is malformed');
    expect(malformed.details.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'objective' })]));
    const forged = await expectCodeAsync(reviseChild(parent, r1, childRequest('b'), new Map(), actors.mallory, w.mintDeps), 'invalid_request');
    expect(forged.message).toBe("only the parent's delegatee may revise a delegation under it");
    // A root is never a revision under a parent.
    const root = parent.leaf;
    const notChild = await expectCodeAsync(reviseChild(parent, root, childRequest('b'), new Map(), actors.agentA, w.mintDeps), 'invalid_request');
    expect(notChild.message).toBe('the revision must stay under the same parent revision');
  });
});
