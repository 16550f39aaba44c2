import { describe, expect, it } from 'vitest';
import { mintedContract, parseContract, type ContractBody, type DelegationContract } from '../../src/contracts/model.ts';
import { sealContract } from '../../src/contracts/signing.ts';
import { canonicalText, freezeCanonical } from '../../src/records/canonical.ts';
import { computeContentDigest, refOf } from '../../src/records/envelope.ts';
import { RECORD_LIMITS } from '../../src/records/limits.ts';
import { expectCode, expectCodeAsync } from '../helpers/errors.ts';
import { actors, childRequest, world, type World } from './fixtures.ts';

async function forge(w: World, mutate: (b: ContractBody & Record<string, unknown>) => void) {
  const { contract } = await w.issue();
  const body = structuredClone(contract.body) as ContractBody & Record<string, unknown>;
  mutate(body);
  body.delegation_id = w.ids.next('dlg');
  return sealContract({ body }, w.mintDeps);
}

describe('contract model', () => {
  it.each([
    ['an operation wildcard', { scope: { operations: ['a2a.*'] } }],
    ['a project wildcard', { scope: { resources: [{ kind: 'project', project_id: '*' }] } }],
    ['an "all" selector', { scope: { resources: [{ kind: 'project', project_id: 'ALL' }] } }],
    ['a regex selector', { scope: { resources: [{ kind: 'object', project_id: 'PRJ-1', object_id: 'SRC-.+' }] } }],
  ])('rejects %s as malformed scope', async (_n, terms) => {
    const w = await world();
    await expectCodeAsync(w.issue({ terms }), 'invalid_request');
  });

  it('retains an unknown body member, digested and signed, and reads only typed fields', async () => {
    const w = await world();
    const c = await forge(w, (b) => void (b.x_vendor = { note: 'kept' }));
    const parsed = parseContract(structuredClone(c));
    expect((parsed.body as Record<string, unknown>).x_vendor).toEqual({ note: 'kept' });
    expect(computeContentDigest(parsed)).toBe(c.content_digest);
  });

  it('more than 256 scope entries is limit_exceeded', async () => {
    const w = await world();
    const c = await forge(w, (b) => {
      b.scope.resources = Array.from({ length: 254 }, (_, i) => ({ kind: 'object', project_id: 'PRJ-1', object_id: `o${i}` }));
    });
    expect(expectCode(() => parseContract(c), 'limit_exceeded').details.bound).toBe('scope_entries');
  });

  it('more than 16 budget dimensions is limit_exceeded', async () => {
    const w = await world();
    const c = await forge(w, (b) => {
      b.budget_ceilings = Array.from({ length: 17 }, (_, i) => ({ name: `d${i}`, unit: 'unit', ceiling: '1' }));
    });
    expect(expectCode(() => parseContract(c), 'limit_exceeded').details.bound).toBe('budget_dimensions');
  });

  it('objective text over 2 KiB is limit_exceeded; a record over 64 KiB is limit_exceeded', async () => {
    const w = await world();
    const wordy = await forge(w, (b) => void (b.objective = { text: 'x'.repeat(2049), type: 'evidence_search' }));
    expect(expectCode(() => parseContract(wordy), 'limit_exceeded').details.bound).toBe('objective');
    const big = await forge(w, (b) => void (b.x_pad = 'y'.repeat(70_000)));
    expect(expectCode(() => parseContract(big), 'limit_exceeded').details.bound).toBe('record_bytes');
  });

  it('a tier without its required gates is invalid_request', async () => {
    const w = await world();
    const t3 = await forge(w, (b) => {
      b.autonomy = { tier: 'T3_consequential_propose', gates: [{ kind: 'pre_effect_permission' }, { kind: 'human_approval' }] };
      b.human_authorities = [];
    });
    expectCode(() => parseContract(t3), 'invalid_request');
    const t1 = await forge(w, (b) => void (b.autonomy = { tier: 'T1_draft', gates: [{ kind: 'automated_scope_check' }] }));
    expectCode(() => parseContract(t1), 'invalid_request');
  });

  it('a body whose delegation_id differs from its record id is invalid_request', async () => {
    const w = await world();
    const { contract } = await w.issue();
    const other = structuredClone(contract);
    other.body.delegation_id = 'dlg_someone_else';
    other.content_digest = computeContentDigest(other);
    expectCode(() => parseContract(other), 'invalid_request');
  });

  it('a record of another type is not a contract', async () => {
    const w = await world();
    const { contract } = await w.issue();
    const card = { ...structuredClone(contract), schema_ref: 'rw-agent-delegation/0.1.1#agent_card' };
    card.content_digest = computeContentDigest(card);
    expectCode(() => parseContract(card), 'invalid_request');
    const future = { ...card, schema_ref: 'rw-agent-delegation/9.9#delegation_contract' };
    future.content_digest = computeContentDigest(future);
    expectCode(() => parseContract(future), 'unsupported');
  });
});

// The contract schema is the validation rule of a presented chain: each refusal names itself, and each bound sits
// exactly at its limit.
describe('contract model: refusals by message, bounds at their limit', () => {
  const refusal = (fn: () => unknown, code: 'invalid_request' | 'limit_exceeded') => {
    const err = expectCode(fn, code);
    return [err.message, err.details];
  };

  it('an authenticated principal binding is a valid binding', async () => {
    const w = await world();
    const c = await forge(w, (b) => void (b.principal_binding = { subject_id: 'sub_oidc', kind: 'authenticated', auth_context_ref: 'ctx_1' }));
    expect(parseContract(structuredClone(c)).body.principal_binding).toStrictEqual({ subject_id: 'sub_oidc', kind: 'authenticated', auth_context_ref: 'ctx_1' });
  });

  it('a malformed typed member is refused, naming where', async () => {
    const w = await world();
    const c = await forge(w, (b) => void (b.delegatee_agent_ref = { card_ref: 'card_a' } as never));
    const [message, details] = refusal(() => parseContract(c), 'invalid_request');
    expect(message).toBe('contract body is malformed');
    expect((details as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toContain('delegatee_agent_ref.card_ref');
  });

  it('another record type, and a body naming another delegation, are refused by message', async () => {
    const w = await world();
    const { contract } = await w.issue();
    const card = { ...structuredClone(contract), schema_ref: 'rw-agent-delegation/0.1.1#agent_card' };
    card.content_digest = computeContentDigest(card);
    expect(refusal(() => parseContract(card), 'invalid_request')).toStrictEqual(['record is not a delegation contract', { record_id: contract.record_id }]);
    const other = structuredClone(contract);
    other.body.delegation_id = 'dlg_someone_else';
    other.content_digest = computeContentDigest(other);
    expect(refusal(() => parseContract(other), 'invalid_request')).toStrictEqual(['contract delegation_id does not match its record id', { record_id: contract.record_id }]);
  });

  it('objective text of exactly 2 KiB is accepted; one byte more is refused by message', async () => {
    const w = await world();
    const at = await forge(w, (b) => void (b.objective = { text: 'x'.repeat(RECORD_LIMITS.maxPurposeBytes), type: 'evidence_search' }));
    expect(parseContract(structuredClone(at)).body.objective.text).toHaveLength(2048);
    const over = await forge(w, (b) => void (b.objective = { text: 'x'.repeat(RECORD_LIMITS.maxPurposeBytes + 1), type: 'evidence_search' }));
    expect(refusal(() => parseContract(over), 'limit_exceeded')).toStrictEqual(['objective text exceeds 2048 bytes', { bound: 'objective' }]);
  });

  it('a tier without its gates names the problems', async () => {
    const w = await world();
    const t1 = await forge(w, (b) => void (b.autonomy = { tier: 'T1_draft', gates: [{ kind: 'automated_scope_check' }] }));
    const [message, details] = refusal(() => parseContract(t1), 'invalid_request');
    expect(message).toBe('autonomy tier lacks its required gates');
    expect((details as { problems: unknown[] }).problems.length).toBeGreaterThan(0);
  });

  it('remaining depth may reach the root maximum and not beyond it, for a child as for a root', async () => {
    const w = await world();
    const root = await w.issue();
    const child = await w.mint(refOf(root.contract), childRequest('b'), actors.agentA);
    const withRemaining = async (base: DelegationContract, remaining: number) => {
      const body = structuredClone(base.body);
      body.subdelegation_policy.max_remaining_depth = remaining;
      body.delegation_id = w.ids.next('dlg');
      return sealContract({ body }, w.mintDeps);
    };
    expect(child.contract.body.lineage).toMatchObject({ depth: 1, root_max_depth: 4 });
    expect(parseContract(structuredClone(await withRemaining(child.contract, 3))).body.subdelegation_policy.max_remaining_depth).toBe(3);
    const deep = await withRemaining(child.contract, 4);
    expect(refusal(() => parseContract(deep), 'limit_exceeded')).toStrictEqual(['delegation depth exceeds the root maximum', { bound: 'depth', depth: 1, root_max_depth: 4 }]);
    // A child deeper than its root allows, with nothing left to delegate.
    const tooDeep = structuredClone(child.contract.body);
    tooDeep.lineage = { ...tooDeep.lineage, depth: 5 } as never;
    tooDeep.subdelegation_policy.max_remaining_depth = 0;
    tooDeep.subdelegation_policy.allowed = false;
    tooDeep.delegation_id = w.ids.next('dlg');
    const sealed = await sealContract({ body: tooDeep }, w.mintDeps);
    expect(refusal(() => parseContract(sealed), 'limit_exceeded')).toStrictEqual(['delegation depth exceeds the root maximum', { bound: 'depth', depth: 5, root_max_depth: 4 }]);
  });

  it('a mutable input is parsed every time: tampering after a first parse is still refused', async () => {
    const w = await world();
    const { contract } = await w.issue();
    const mutable = structuredClone(contract);
    expect(parseContract(mutable).body.delegation_id).toBe(contract.record_id);
    mutable.body.delegation_id = 'dlg_someone_else';
    mutable.content_digest = computeContentDigest(mutable);
    expect(refusal(() => parseContract(mutable), 'invalid_request')[0]).toBe('contract delegation_id does not match its record id');
  });

  it('a record of exactly 64 KiB is accepted, parsed or minted; one byte more is refused by message', async () => {
    const w = await world();
    const padded = (n: number) => forge(w, (b) => void (b.x_pad = 'y'.repeat(n)));
    const size = (c: DelegationContract) => Buffer.byteLength(canonicalText(c), 'utf8');
    const probe = await padded(1000);
    const exact = await padded(1000 + RECORD_LIMITS.maxRecordBytes - size(probe));
    expect(size(exact)).toBe(RECORD_LIMITS.maxRecordBytes);
    expect(parseContract(structuredClone(exact)).record_id).toBe(exact.record_id);
    expect(mintedContract(exact)).toBe(exact);
    const over = await padded(1001 + RECORD_LIMITS.maxRecordBytes - size(probe));
    expect(size(over)).toBe(RECORD_LIMITS.maxRecordBytes + 1);
    const bound = ['contract exceeds the 64 KiB record bound', { bound: 'record_bytes' }];
    expect(refusal(() => parseContract(structuredClone(over)), 'limit_exceeded')).toStrictEqual(bound);
    expect(refusal(() => mintedContract(over), 'limit_exceeded')).toStrictEqual(bound);
  });

  it('mintedContract takes only a sealed (deep-frozen) contract whose body names its record', async () => {
    const w = await world();
    const { contract } = await w.issue();
    expect(() => mintedContract(structuredClone(contract))).toThrow(new TypeError('a minted contract is sealed (deep-frozen)'));
    const renamed = freezeCanonical({ ...structuredClone(contract), record_id: 'dlg_other' });
    expect(() => mintedContract(renamed)).toThrow(new TypeError('sealed record id does not match the delegation id'));
  });
});
