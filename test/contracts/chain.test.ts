import { describe, expect, it } from 'vitest';
import { evaluateChain } from '../../src/contracts/admission.ts';
import { buildChain, loadChain, MAX_CHAIN_LENGTH, verifyChain, type AuthorityHead } from '../../src/contracts/attestation-chain.ts';
import { mintChild } from '../../src/contracts/mint.ts';
import type { DelegationContract } from '../../src/contracts/model.ts';
import { sealContract } from '../../src/contracts/signing.ts';
import { computeContentDigest, refOf } from '../../src/records/envelope.ts';
import { manualClock } from '../../src/records/time.ts';
import type { BatonError } from '../../src/errors.ts';
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

// Each guard answers with its own message and details (the reason and index reach the caller),
// and sits exactly at its bound.
describe('attestation chain guards, by message and details', () => {
  const refusal = async (p: Promise<unknown>, code: 'invalid_request' | 'limit_exceeded' | 'context_invalidated' | 'deny') => {
    const err = await expectCodeAsync(p, code);
    return [err.message, err.details];
  };

  it('an empty chain, and buildChain of nothing', async () => {
    const w = await world();
    expect(await refusal(verifyChain([], w.adm), 'invalid_request')).toStrictEqual(['empty delegation chain', {}]);
    expect(() => buildChain([])).toThrow(new TypeError('a chain has at least one contract'));
  });

  it('more records than any chain may hold, then more than the root allows, then a repeated contract', async () => {
    const w = await world();
    const [r] = await threeHops(w);
    expect(r!.body.lineage).toMatchObject({ kind: 'root', root_max_depth: 4 });
    const copies = (n: number): unknown[] => Array.from({ length: n }, () => r);
    expect(await refusal(verifyChain(copies(MAX_CHAIN_LENGTH + 1), w.adm), 'limit_exceeded')).toStrictEqual([
      'delegation chain is too long',
      { bound: 'depth', length: MAX_CHAIN_LENGTH + 1 },
    ]);
    // MAX_CHAIN_LENGTH itself passes the first bound and meets the root's own.
    expect(await refusal(verifyChain(copies(MAX_CHAIN_LENGTH), w.adm), 'limit_exceeded')).toStrictEqual([
      'chain is longer than its root allows',
      { bound: 'depth', reason: 'too_long' },
    ]);
    expect(await refusal(verifyChain(copies(6), w.adm), 'limit_exceeded')).toStrictEqual(['chain is longer than its root allows', { bound: 'depth', reason: 'too_long' }]);
    // root_max_depth + 1 contracts is within the root's bound: the repetition is what is refused.
    expect(await refusal(verifyChain(copies(5), w.adm), 'invalid_request')).toStrictEqual(['delegation chain contains a cycle', { reason: 'cycle' }]);
  });

  it('a root inside the chain, a chain out of order, a gap', async () => {
    const w = await world();
    const [r, c, g] = await threeHops(w);
    const { contract: other } = await w.issue();
    expect(await refusal(verifyChain([r, other], w.adm), 'invalid_request')).toStrictEqual([
      'a root contract appears inside the chain',
      { reason: 'order', index: 1 },
    ]);
    expect(await refusal(verifyChain([r, g, c], w.adm), 'invalid_request')).toStrictEqual(['delegation chain is out of order', { reason: 'order', index: 1 }]);
    expect(await refusal(verifyChain([r, g], w.adm), 'invalid_request')).toStrictEqual(['delegation chain has a gap', { reason: 'gap', index: 1 }]);
    expect(await refusal(verifyChain([c, g], w.adm), 'invalid_request')).toStrictEqual(['chain does not start at a root contract', { reason: 'order' }]);
  });

  it('issue times: exactly at the skew horizon is accepted; beyond, and before the parent, are named', async () => {
    const w = await world();
    const root = await w.issue();
    const chain = await w.evaluate(refOf(root.contract));
    const ahead = await mintChild(chain, childRequest('b'), actors.agentA, { ...w.mintDeps, clock: manualClock(at(5 * 60_000)) });
    const noHeads = { clock: w.clock, resolveSignerKey: w.resolveSignerKey };
    await expect(verifyChain([root.contract, ahead.contract], { ...noHeads, maxClockSkewMs: 5 * 60_000 })).resolves.toBeDefined();
    expect(await refusal(verifyChain([root.contract, ahead.contract], { ...noHeads, maxClockSkewMs: 5 * 60_000 - 1 }), 'invalid_request')).toStrictEqual([
      'contract is issued in the future beyond the clock-skew bound',
      { reason: 'clock_skew', index: 1 },
    ]);
    w.clock.advance(10 * 60_000);
    const late = await w.issue();
    const lateChain = await w.evaluate(refOf(late.contract));
    const early = await mintChild(lateChain, childRequest('b'), actors.agentA, { ...w.mintDeps, clock: manualClock(at(0)) });
    expect(await refusal(verifyChain([late.contract, early.contract], w.adm), 'invalid_request')).toStrictEqual([
      'child contract is issued before its parent',
      { reason: 'issued_before_parent', index: 1 },
    ]);
  });

  it('a forged ancestry and a wider hop name the index of the offending contract', async () => {
    const w = await world();
    const [r, c] = await threeHops(w);
    const { contract: other } = await w.issue();
    const body = { ...clone(c!.body), ancestry: [{ ...c!.body.ancestry[0]!, contract_ref: refOf(other) }], delegation_id: 'dlg_forged' };
    const forged = await sealContract({ body }, { ...w.mintDeps, ids: w.ids });
    expect(await refusal(verifyChain([r, forged], w.adm), 'invalid_request')).toStrictEqual(['contract ancestry does not match the chain', { reason: 'ancestry', index: 1 }]);
    const wideBody = clone(c!.body);
    wideBody.limits.max_tokens = 10_000_000;
    wideBody.delegation_id = 'dlg_wide';
    const wide = await sealContract({ body: wideBody }, w.mintDeps);
    const err = await expectCodeAsync(verifyChain([r, wide], { clock: w.clock, resolveSignerKey: w.resolveSignerKey }), 'deny');
    expect(err.details.index).toBe(1);
  });

  it('against the authority state: unknown, replaced and inactive delegations', async () => {
    const w = await world();
    const [r, c] = await threeHops(w);
    const headsOf = (fn: (id: string) => AuthorityHead | undefined) => ({ ...w.adm, heads: { head: async (id: string) => fn(id) } });
    const active = (x: DelegationContract): AuthorityHead => ({ ref: refOf(x), status: 'active' });
    expect(await refusal(verifyChain([r, c], headsOf((id) => (id === r!.record_id ? active(r!) : undefined))), 'invalid_request')).toStrictEqual([
      'delegation is not known to the authority state',
      { reason: 'unresolved', index: 1 },
    ]);
    const replaced = { ref: { ...refOf(c!), revision_id: 'rev_newer' }, status: 'active' } as const;
    expect(await refusal(verifyChain([r, c], headsOf((id) => (id === r!.record_id ? active(r!) : replaced))), 'context_invalidated')).toStrictEqual([
      'delegation revision has been replaced',
      { reason: 'stale_revision', index: 1, delegation_id: c!.record_id },
    ]);
    expect(await refusal(verifyChain([r, c], headsOf((id) => ({ ...active(id === r!.record_id ? r! : c!), status: 'suspended' }))), 'context_invalidated')).toStrictEqual([
      'delegation is suspended',
      { reason: 'suspended', index: 0, delegation_id: r!.record_id },
    ]);
  });
});

describe('loadChain guards', () => {
  /** An in-memory record port over fabricated contracts (digests recomputed; loadChain verifies no signatures). */
  const memory = (records: DelegationContract[]) => {
    const byRev = new Map(records.map((x) => [`${x.record_id}@${x.revision_id}`, x]));
    return { getRecord: async (id: string, rev?: string) => byRev.get(`${id}@${rev}`) as never };
  };
  const childOf = (template: DelegationContract, id: string, rev: string, parent: DelegationContract): DelegationContract => {
    const x = clone(template) as DelegationContract & { content_digest: string };
    Object.assign(x, { record_id: id, revision_id: rev });
    x.body.delegation_id = id;
    x.body.lineage = { ...(x.body.lineage as object), parent_ref: refOf(parent) } as never;
    x.content_digest = computeContentDigest(x);
    return x;
  };

  it('loads exactly MAX_CHAIN_LENGTH contracts and refuses one more before fetching it', async () => {
    const w = await world();
    const [r, c] = await threeHops(w);
    const links: DelegationContract[] = [r!];
    for (let i = 1; i <= MAX_CHAIN_LENGTH; i++) links.push(childOf(c!, `dlg_l${i}`, `rev_l${i}`, links[i - 1]!));
    const store = memory(links);
    expect(await loadChain(store, refOf(links[MAX_CHAIN_LENGTH - 1]!))).toHaveLength(MAX_CHAIN_LENGTH);
    expect(await refusal(loadChain(store, refOf(links[MAX_CHAIN_LENGTH]!)))).toStrictEqual(['limit_exceeded', 'delegation chain is too long', { bound: 'depth' }]);
  });

  it('refuses a lineage that returns to a delegation already walked (a revision naming its own earlier revision)', async () => {
    const w = await world();
    const [r, c] = await threeHops(w);
    const first = childOf(c!, 'dlg_loop', 'rev_1', r!);
    const second = childOf(c!, 'dlg_loop', 'rev_2', first);
    expect(await refusal(loadChain(memory([r!, first, second]), refOf(second)))).toStrictEqual(['invalid_request', 'delegation chain contains a cycle', { reason: 'cycle' }]);
  });

  it('names the revision it cannot resolve', async () => {
    const w = await world();
    const chain = await threeHops(w);
    const wrong = { ...refOf(chain[2]!), content_digest: `sha256:${'1'.repeat(64)}` };
    expect(await refusal(loadChain(w.store, wrong))).toStrictEqual([
      'invalid_request',
      'delegation chain names a revision that cannot be resolved',
      { reason: 'unresolved', object_id: chain[2]!.record_id },
    ]);
  });

  async function refusal(p: Promise<unknown>): Promise<unknown[]> {
    try {
      await p;
    } catch (err) {
      const e = err as BatonError;
      return [e.code, e.message, e.details];
    }
    throw new Error('expected a refusal');
  }
});
