/**
 * The verified-signature cache (src/records/verified-signatures.ts): a hit
 * needs the very bytes, signature and key that verified before, so a
 * tampered record, a swapped signature or another key under the same kid is
 * still refused after the genuine one was cached.
 */
import { generateKeyPairSync } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { Lru } from '../../src/records/lru.ts';
import { freezeCanonical } from '../../src/records/canonical.ts';
import { provenOn, rememberProvenOn, signDetached, signDetachedForRecord, verifyDetached } from '../../src/records/signature.ts';
import { forgetVerifiedSignatures, verifiedSignatureStats } from '../../src/records/verified-signatures.ts';
import { expectCodeAsync } from '../helpers/errors.ts';

const es = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const bytes = (s: string) => new TextEncoder().encode(s);
const header = { alg: 'ES256' as const, kid: 'k1' };

describe('verified-signature cache', () => {
  beforeEach(() => forgetVerifiedSignatures());

  it('a signature Baton made is entered at signing and verifies from the cache', async () => {
    const { privateKey, publicKey } = es();
    const sig = await signDetached(bytes('{"a":1}'), privateKey, header);
    await verifyDetached(bytes('{"a":1}'), sig, publicKey);
    expect(verifiedSignatureStats()).toMatchObject({ hits: 1, misses: 0, size: 1 });
  });

  it('an external signature is verified once, then answered from the cache', async () => {
    const { privateKey, publicKey } = es();
    const sig = await signDetached(bytes('{"a":1}'), privateKey, header);
    forgetVerifiedSignatures();
    await verifyDetached(bytes('{"a":1}'), sig, publicKey);
    await verifyDetached(bytes('{"a":1}'), sig, publicKey);
    expect(verifiedSignatureStats()).toMatchObject({ hits: 1, misses: 1, size: 1 });
  });

  it('after the genuine record was cached, a tampered payload is still refused', async () => {
    const { privateKey, publicKey } = es();
    const sig = await signDetached(bytes('{"amount":10}'), privateKey, header);
    await verifyDetached(bytes('{"amount":10}'), sig, publicKey);
    const err = await expectCodeAsync(verifyDetached(bytes('{"amount":99}'), sig, publicKey), 'invalid_request');
    expect(err.message).toBe('signature does not verify');
  });

  it('a tampered protected header or signature is still refused', async () => {
    const { privateKey, publicKey } = es();
    const sig = await signDetached(bytes('{"a":1}'), privateKey, header);
    await verifyDetached(bytes('{"a":1}'), sig, publicKey);
    const other = await signDetached(bytes('{"a":1}'), privateKey, { alg: 'ES256', kid: 'k2' });
    await expectCodeAsync(verifyDetached(bytes('{"a":1}'), { ...sig, protected: other.protected }, publicKey), 'invalid_request');
    const flipped = Buffer.from(sig.signature, 'base64url');
    flipped[5] = flipped[5]! ^ 1;
    await expectCodeAsync(verifyDetached(bytes('{"a":1}'), { ...sig, signature: flipped.toString('base64url') }, publicKey), 'invalid_request');
  });

  it('another key under the same kid does not inherit the cached verification', async () => {
    const genuine = es();
    const impostor = es();
    const sig = await signDetached(bytes('{"a":1}'), genuine.privateKey, header);
    await verifyDetached(bytes('{"a":1}'), sig, genuine.publicKey);
    await expectCodeAsync(verifyDetached(bytes('{"a":1}'), sig, impostor.publicKey), 'invalid_request');
  });

  it('failures are never entered', async () => {
    const { privateKey, publicKey } = es();
    const sig = await signDetached(bytes('x'), privateKey, header);
    forgetVerifiedSignatures();
    await expectCodeAsync(verifyDetached(bytes('y'), sig, publicKey), 'invalid_request');
    await expectCodeAsync(verifyDetached(bytes('y'), sig, publicKey), 'invalid_request');
    expect(verifiedSignatureStats()).toMatchObject({ hits: 0, size: 0 });
  });
});

describe('proofs remembered on a deep-frozen record (issue #24)', () => {
  beforeEach(() => forgetVerifiedSignatures());
  const record = () => freezeCanonical({ body: { a: 1 }, signatures: [{ protected: 'p', signature: 's' }] });

  it('a signature made for a record verifies, and is not entered by its bytes', async () => {
    const { privateKey, publicKey } = es();
    const sig = signDetachedForRecord(bytes('{"a":1}'), privateKey, header);
    expect(verifiedSignatureStats().size).toBe(0);
    expect((await verifyDetached(bytes('{"a":1}'), sig, publicKey)).kid).toBe('k1');
    expect(verifiedSignatureStats()).toMatchObject({ hits: 0, misses: 1, size: 1 });
    await expectCodeAsync(verifyDetached(bytes('{"a":2}'), sig, publicKey), 'invalid_request');
  });

  it('answers for the record, position and key material remembered (the private half names its public key), and nothing else', () => {
    const { privateKey, publicKey } = es();
    const r = record();
    expect(provenOn(r, 0, publicKey)).toBe(false);
    rememberProvenOn(r, 0, privateKey);
    expect(provenOn(r, 0, publicKey)).toBe(true);
    expect(provenOn(r, 0, privateKey)).toBe(true);
    expect(provenOn(r, 1, publicKey)).toBe(false);
    expect(provenOn(record(), 0, publicKey)).toBe(false);
    expect(provenOn(r, 0, es().publicKey)).toBe(false);
    expect(verifiedSignatureStats()).toMatchObject({ recordHits: 2, size: 0 });
    forgetVerifiedSignatures();
    expect(provenOn(r, 0, publicKey)).toBe(false);
  });

  it('keeps the proof of every signature of one record, each with its own key', () => {
    const first = es();
    const second = es();
    const r = record();
    rememberProvenOn(r, 1, second.privateKey);
    rememberProvenOn(r, 0, first.privateKey);
    expect([provenOn(r, 0, first.publicKey), provenOn(r, 1, second.publicKey)]).toStrictEqual([true, true]);
    expect([provenOn(r, 0, second.publicKey), provenOn(r, 1, first.publicKey)]).toStrictEqual([false, false]);
  });

  it('never remembers a record that is not deep-frozen: it could change after the check', () => {
    const { privateKey, publicKey } = es();
    const open = { body: { a: 1 }, signatures: [] };
    rememberProvenOn(open, 0, privateKey);
    expect(provenOn(open, 0, publicKey)).toBe(false);
    const sealedLater = freezeCanonical(open);
    expect(provenOn(sealedLater, 0, publicKey)).toBe(false);
    expect(provenOn(Object.freeze({ body: { a: 1 } }), 0, publicKey)).toBe(false);
  });
});

describe('Lru', () => {
  it('holds at most max entries and evicts the least recently used', () => {
    const lru = new Lru<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1); // a is now the most recent
    lru.set('c', 3);
    expect(lru.size).toBe(2);
    expect(lru.get('b')).toBeUndefined();
    expect([lru.get('a'), lru.get('c')]).toEqual([1, 3]);
  });

  it('refuses a bound below one', () => {
    expect(() => new Lru(0)).toThrow(RangeError);
  });
});
