/**
 * The verified-signature cache's counters (src/records/verified-signatures.ts)
 * start at zero in a fresh process, before anything is forgotten: the other
 * tests reset them first, so only this file, alone in its module, sees the
 * initial state.
 */
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { provenBefore, verifiedSignatureStats } from '../../src/records/verified-signatures.ts';

describe('verified-signature counters', () => {
  it('count from zero before the cache was ever forgotten', () => {
    expect(verifiedSignatureStats()).toStrictEqual({ hits: 0, misses: 0, recordHits: 0, size: 0 });
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expect(provenBefore(Buffer.from('input'), Buffer.from('signature'), publicKey)).toBe(false);
    expect(verifiedSignatureStats()).toStrictEqual({ hits: 0, misses: 1, recordHits: 0, size: 0 });
  });
});
