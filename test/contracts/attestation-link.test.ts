// One hop of the attestation chain a downstream gateway accepts (RW-003 §8): the signer evidence it carries,
// and the link schema a presented ancestry is parsed with.
import { describe, expect, it } from 'vitest';
import { AttestationLink, linkOf } from '../../src/contracts/attestation-link.ts';
import { world } from './fixtures.ts';

describe('attestation link', () => {
  it('an unsigned contract yields a link without signer evidence (never a made-up signer)', async () => {
    const w = await world();
    const { contract } = await w.issue();
    const { signatures: _s, ...unsigned } = contract;
    expect(linkOf(unsigned as typeof contract).signers).toStrictEqual([]);
    expect(linkOf(contract).signers).toStrictEqual([expect.objectContaining({ kid: 'baton-k1', alg: 'ES256' })]);
  });

  it('a link carries between one and eight signers', async () => {
    const w = await world();
    const { chain } = await w.issue();
    const link = chain.links[0]!;
    const withSigners = (n: number) => AttestationLink.safeParse({ ...link, signers: Array.from({ length: n }, () => link.signers[0]) }).success;
    expect([0, 1, 2, 8, 9].map(withSigners)).toStrictEqual([false, true, true, true, false]);
  });
});
