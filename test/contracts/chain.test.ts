import { describe, expect, it } from 'vitest';
import { evaluateChain } from '../../src/contracts/admission.ts';
import { loadChain, MAX_CHAIN_LENGTH, verifyChain } from '../../src/contracts/attestation-chain.ts';
import { mintChild } from '../../src/contracts/mint.ts';
import type { DelegationContract } from '../../src/contracts/model.ts';
import { sealContract } from '../../src/contracts/signing.ts';
import { computeContentDigest, refOf } from '../../src/records/envelope.ts';
import { manualClock } from '../../src/records/time.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { actors, at, childRequest, HOUR, world, type World } from './fixtures.ts';

/** root → child(b) → grandchild(c), stored. */
async function threeHops(w: World): Promise<DelegationContract[]> {
  const root = await w.issue();
  const child = await w.mint(refOf(root.contract), childRequest('b'), actors.agentA);
  const grand = await w.mint(refOf(child.contract), childRequest('c'), actors.agentB);
  return [root.contract, child.contract, grand.contract];
}
const clone = <T>(v: T): T => structuredClone(v);

describe('attestation chain verification', () => {
  it('accepts a valid root → leaf chain and rebuilds its links', async () => {
    const w = await world();
    const chain = await threeHops(w);
    const v = await verifyChain(chain, w.adm);
    expect(v.chain.links.map((l) => l.delegatee_card_ref.object_id)).toEqual(['card_a', 'card_b', 'card_c']);
    expect(v.chain.links.every((l) => l.signers[0]?.kid === 'baton-k1')).toBe(true);
    expect(await loadChain(w.store, refOf(chain[2]!))).toEqual(chain.map((c) => expect.objectContaining({ revision_id: c.revision_id })));
  });

  it('rejects wrong order', async () => {
    const w = await world();
    const [r, c, g] = await threeHops(w);
    const err = await expectCodeAsync(verifyChain([r, g, c], w.adm), 'invalid_request');
    expect(err.details.reason).toBe('order');
    expect((await expectCodeAsync(verifyChain([c, g], w.adm), 'invalid_request')).details.reason).toBe('order');
  });

  it('rejects a gap', async () => {
    const w = await world();
    const [r, , g] = await threeHops(w);
    expect((await expectCodeAsync(verifyChain([r, g], w.adm), 'invalid_request')).details.reason).toBe('gap');
  });

  it('rejects a cycle', async () => {
    const w = await world();
    const [r, c] = await threeHops(w);
    expect((await expectCodeAsync(verifyChain([r, c, c], w.adm), 'invalid_request')).details.reason).toBe('cycle');
  });

  it('rejects tampering, with or without a recomputed digest', async () => {
    const w = await world();
    const chain = await threeHops(w);
    const t = clone(chain);
    t[1]!.body.scope.operations.push('a2a.SetTaskPushNotificationConfig');
    await expectCodeAsync(verifyChain(t, w.adm), 'invalid_request');
    t[1]!.content_digest = computeContentDigest(t[1]!);
    await expectCodeAsync(verifyChain(t, w.adm), 'invalid_request');
  });

  it('rejects a wrong signer: unknown kid, or a key of another issuer', async () => {
    const w = await world();
    const root = await w.issue();
    const chain = await w.evaluate(refOf(root.contract));
    const rogue = await w.makeSigner(actors.baton, 'rogue', false);
    const forged = await mintChild(chain, childRequest('b'), actors.agentA, { ...w.mintDeps, signer: rogue });
    await expectCodeAsync(verifyChain([root.contract, forged.contract], w.adm), 'invalid_request');
    const other = await w.makeSigner(actors.mallory, 'baton-k1');
    const impostor = await mintChild(chain, childRequest('b'), actors.agentA, { ...w.mintDeps, signer: { ...other, actorRef: actors.baton } });
    await expectCodeAsync(verifyChain([root.contract, impostor.contract], w.adm), 'invalid_request');
    const unsigned = { ...clone(root.contract), signatures: [] };
    await expectCodeAsync(verifyChain([unsigned], w.adm), 'invalid_request');
  });

  it('rejects over-long chains', async () => {
    const w = await world();
    const chain = await threeHops(w);
    const long = Array.from({ length: MAX_CHAIN_LENGTH + 1 }, () => chain[0]);
    expect((await expectCodeAsync(verifyChain(long, w.adm), 'limit_exceeded')).details.bound).toBe('depth');
    // A body claiming depth beyond its root maximum is refused as a record bound.
    const deep = clone(chain[2]!);
    deep.body.lineage = { ...deep.body.lineage, depth: 5 } as never;
    deep.content_digest = computeContentDigest(deep);
    await expectCodeAsync(verifyChain([chain[0], chain[1], deep], w.adm), 'limit_exceeded');
  });

  it('rejects a child issued before its parent', async () => {
    const w = await world();
    w.clock.advance(10 * 60_000);
    const root = await w.issue();
    const chain = await w.evaluate(refOf(root.contract));
    const early = await mintChild(chain, childRequest('b'), actors.agentA, { ...w.mintDeps, clock: manualClock(at(0)) });
    expect((await expectCodeAsync(verifyChain([root.contract, early.contract], w.adm), 'invalid_request')).details.reason).toBe('issued_before_parent');
  });

  it('rejects issue times beyond the clock-skew bound, accepts within it', async () => {
    const w = await world();
    const root = await w.issue();
    const chain = await w.evaluate(refOf(root.contract));
    const ahead = await mintChild(chain, childRequest('b'), actors.agentA, { ...w.mintDeps, clock: manualClock(at(5 * 60_000)) });
    const err = await expectCodeAsync(verifyChain([root.contract, ahead.contract], { ...w.adm, maxClockSkewMs: 60_000 }), 'invalid_request');
    expect(err.details.reason).toBe('clock_skew');
    const noHeads = { clock: w.clock, resolveSignerKey: w.resolveSignerKey };
    await expect(verifyChain([root.contract, ahead.contract], { ...noHeads, maxClockSkewMs: 10 * 60_000 })).resolves.toBeDefined();
  });

  it('rejects an embedded ancestry that differs from the chain', async () => {
    const w = await world();
    const [r, c] = await threeHops(w);
    const { contract: other } = await w.issue();
    // Re-sign c with a forged ancestry naming another root: the hop no longer matches.
    const body = { ...clone(c!.body), ancestry: [{ ...c!.body.ancestry[0]!, contract_ref: refOf(other) }] };
    const forged = await sealContract({ body: { ...body, delegation_id: 'dlg_forged' } }, { ...w.mintDeps, ids: w.ids });
    expect((await expectCodeAsync(verifyChain([r, forged], w.adm), 'invalid_request')).details.reason).toBe('ancestry');
  });

  it('re-proves attenuation on every hop: a signed but wider child is denied', async () => {
    const w = await world();
    const [r, c] = await threeHops(w);
    const body = clone(c!.body);
    body.limits.max_tokens = 10_000_000;
    body.delegation_id = 'dlg_wide';
    const wide = await sealContract({ body }, w.mintDeps);
    const err = await expectCodeAsync(verifyChain([r, wide], w.adm), 'deny');
    expect(err.details.failures).toEqual([expect.objectContaining({ dimension: 'tokens' })]);
  });

  it.each([
    ['issuer', (b: DelegationContract['body']): void => {
      b.issuer_binding = { ...b.issuer_binding, issuer_id: 'iss_other' };
    }],
    ['subject', (b: DelegationContract['body']): void => {
      b.principal_binding = { subject_id: 'sub_bob', kind: 'local' };
    }],
    ['domain', (b: DelegationContract['body']): void => {
      b.owner = { ...b.owner, access_domain: 'dom_other' };
    }],
    ['ledger', (b: DelegationContract['body']): void => {
      b.ledger_ref = 'ledger_fresh';
    }],
    ['delegator', (b: DelegationContract['body']): void => {
      b.delegator_actor_ref = actors.mallory;
    }],
    ['depth', (b: DelegationContract['body']): void => {
      b.lineage = { ...b.lineage, depth: 2 } as never;
    }],
    ['lineage', (b: DelegationContract['body']): void => {
      b.lineage = { ...b.lineage, root_max_descendants: 31 } as never;
    }],
  ] as const)('a signed child that changes its %s is denied at verification', async (dimension, mutate) => {
    const w = await world();
    const [r, c] = await threeHops(w);
    const body = clone(c!.body);
    mutate(body);
    body.delegation_id = w.ids.next('dlg');
    const forged = await sealContract({ body }, w.mintDeps);
    const err = await expectCodeAsync(verifyChain([r, forged], { clock: w.clock, resolveSignerKey: w.resolveSignerKey }), 'deny');
    expect((err.details.failures as Array<{ dimension: string }>).map((f) => f.dimension)).toContain(dimension);
  });

  it('loadChain refuses a stored revision whose digest differs from the reference', async () => {
    const w = await world();
    const chain = await threeHops(w);
    const wrong = { ...refOf(chain[2]!), content_digest: `sha256:${'1'.repeat(64)}` };
    await expectCodeAsync(loadChain(w.store, wrong), 'invalid_request');
  });
});

describe('admission re-evaluates every ancestor', () => {
  const op = { operation: 'a2a.SendMessage', resource: { kind: 'project', project_id: 'PRJ-1' }, effect_class: 'proposal', data_class: 'public' } as const;

  it('admits a permitted operation and returns the complete fence scope set', async () => {
    const w = await world();
    const chain = await threeHops(w);
    const ev = await w.evaluate(refOf(chain[2]!), op);
    for (const c of chain) expect(ev.fenceScopes).toContainEqual({ space_id: 'sp1', scope_kind: 'delegation', scope_id: c.record_id });
    expect(ev.notAfter).toBe(chain[0]!.body.limits.not_after);
  });

  it('an expired ancestor stops the leaf even though the leaf was valid at mint time', async () => {
    const w = await world();
    const root = await w.issue({ terms: { limits: { not_after: at(HOUR) } } });
    const child = await w.mint(refOf(root.contract), childRequest('b'), actors.agentA);
    w.clock.advance(HOUR);
    const err = await expectCodeAsync(w.evaluate(refOf(child.contract)), 'context_invalidated');
    expect(err.details).toMatchObject({ reason: 'expired', index: 0 });
  });

  it('a revoked ancestor stops every descendant', async () => {
    const w = await world();
    const chain = await threeHops(w);
    const heads = { head: async (id: string) => { const h = await w.heads.head(id); return h && id === chain[0]!.record_id ? { ...h, status: 'revoked' as const } : h; } };
    const err = await expectCodeAsync(evaluateChain(chain, { ...w.adm, heads }), 'context_invalidated');
    expect(err.details).toMatchObject({ reason: 'revoked', index: 0 });
  });

  it('a stale parent revision (replaced by a newer one) is context_invalidated', async () => {
    const w = await world();
    const chain = await threeHops(w);
    const heads = { head: async (id: string) => { const h = await w.heads.head(id); return h && id === chain[1]!.record_id ? { ...h, ref: { ...h.ref, revision_id: 'rev_newer' } } : h; } };
    const err = await expectCodeAsync(evaluateChain(chain, { ...w.adm, heads }), 'context_invalidated');
    expect(err.details).toMatchObject({ reason: 'stale_revision', index: 1 });
  });

  it('an operation must be permitted by every ancestor, and typed denials apply', async () => {
    const w = await world();
    const root = await w.issue();
    const child = await w.mint(refOf(root.contract), childRequest('b', { constraints: [...root.contract.body.constraints, { kind: 'deny_resource', selector: { kind: 'project', project_id: 'PRJ-2' } }] }), actors.agentA);
    const denied = await expectCodeAsync(w.evaluate(refOf(child.contract), { ...op, resource: { kind: 'project', project_id: 'PRJ-2' } }), 'deny');
    expect(denied.details.failures).toEqual([expect.objectContaining({ dimension: 'constraints', index: 1 })]);
    const foreign = await expectCodeAsync(w.evaluate(refOf(child.contract), { ...op, resource: { kind: 'project', project_id: 'PRJ-9' } }), 'deny');
    expect((foreign.details.failures as Array<{ index: number }>).map((f) => f.index)).toEqual([0, 1]);
    await expectCodeAsync(w.evaluate(refOf(child.contract), { ...op, operation: 'a2a.ListTasks' }), 'deny');
  });

  it('an unknown member like scope_override grants nothing at admission', async () => {
    const w = await world();
    const root = await w.issue();
    const body = { ...clone(root.contract.body), delegation_id: 'dlg_override', scope_override: { operations: ['a2a.SetTaskPushNotificationConfig'] } };
    const sealed = await sealContract({ body }, w.mintDeps);
    await w.store.putRecord(sealed as never);
    const v = await verifyChain([sealed], w.adm);
    expect((v.contracts[0]!.body as Record<string, unknown>).scope_override).toBeDefined();
    const err = await expectCodeAsync(
      w.evaluate(refOf(sealed), { ...op, operation: 'a2a.SetTaskPushNotificationConfig', effect_class: 'reversible_mutation' }),
      'deny',
    );
    expect(err.details.failures).toEqual([expect.objectContaining({ dimension: 'operations' })]);
  });

  it('an unknown constraint kind denies every operation; residency fails closed without a region', async () => {
    const w = await world();
    const root = await w.issue();
    // Issuance itself refuses a constraint it cannot enforce…
    const issued = await expectCodeAsync(w.issue({ terms: { constraints: [...root.contract.body.constraints, { kind: 'future_rule' }] } }), 'deny');
    expect(issued.details.failures).toEqual([expect.objectContaining({ dimension: 'constraints' })]);
    // …and a contract that carries one (e.g. from a newer issuer) admits nothing.
    const body = { ...clone(root.contract.body), delegation_id: 'dlg_future', constraints: [{ kind: 'future_rule' }] };
    const odd = await sealContract({ body }, w.mintDeps);
    await w.store.putRecord(odd as never);
    const err = await expectCodeAsync(w.evaluate(refOf(odd), op), 'deny');
    expect(err.details.failures).toEqual([expect.objectContaining({ dimension: 'constraints', reason: expect.stringContaining('future_rule') })]);
    const eu = await w.issue({ terms: { constraints: [{ kind: 'deny_operation', operation: 'a2a.ListTasks' }, { kind: 'data_residency', regions: ['eu'] }] } });
    await expectCodeAsync(w.evaluate(refOf(eu.contract), op), 'deny');
    await expect(w.evaluate(refOf(eu.contract), { ...op, region: 'eu' })).resolves.toBeDefined();
  });
});
