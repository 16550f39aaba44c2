import { describe, expect, it } from 'vitest';
import { parseContract, type ContractBody } from '../../src/contracts/model.ts';
import { sealContract } from '../../src/contracts/signing.ts';
import { computeContentDigest } from '../../src/records/envelope.ts';
import { expectCode, expectCodeAsync } from '../helpers/errors.ts';
import { world, type World } from './fixtures.ts';

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
