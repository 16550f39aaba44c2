/**
 * Detached JWS over canonical bytes (src/records/signature.ts): only ES256 on
 * P-256 and EdDSA on Ed25519, the key must fit the algorithm, alg and kid only
 * in the protected header, no JWS extension, base64url without padding — each
 * refusal is invalid_request with its own message and details.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { generateKeyPair } from 'jose';
import { beforeEach, describe, expect, it } from 'vitest';
import { readProtectedHeader, signDetached, verifyDetached, type DetachedSignature } from '../../src/records/signature.ts';
import { forgetVerifiedSignatures } from '../../src/records/verified-signatures.ts';
import { expectCode, expectCodeAsync } from '../helpers/errors.ts';

const bytes = (s: string) => new TextEncoder().encode(s);
const p256 = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ed = () => generateKeyPairSync('ed25519');
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
/** A signature whose protected header is `h` (the signature bytes are irrelevant to header checks). */
const withHeader = (h: unknown, extra: Partial<DetachedSignature> = {}): DetachedSignature => ({ protected: b64(h), signature: 'AAAA', ...extra });

const NOT_FIT = 'the key does not fit the signature algorithm';
const NOT_VERIFY = 'signature does not verify';
const NOT_ACCEPTABLE = 'signature header is not acceptable (alg allow-list: ES256, EdDSA; kid required)';

describe('signDetached and verifyDetached', () => {
  beforeEach(() => forgetVerifiedSignatures());

  it('EdDSA over Ed25519 signs and verifies by node:crypto, cached or not', async () => {
    const { privateKey, publicKey } = ed();
    const sig = await signDetached(bytes('{"a":1}'), privateKey, { alg: 'EdDSA', kid: 'e1' });
    forgetVerifiedSignatures();
    expect(await verifyDetached(bytes('{"a":1}'), sig, publicKey)).toEqual({ typ: 'JOSE', alg: 'EdDSA', kid: 'e1' });
    expect(Buffer.from(sig.signature, 'base64url')).toHaveLength(64);
    await expect(verifyDetached(bytes('{"a":2}'), sig, publicKey)).rejects.toMatchObject({ message: NOT_VERIFY, details: { kid: 'e1' } });
  });

  it('ES256 signatures are IEEE P1363 (64 bytes) and verify uncached', async () => {
    const { privateKey, publicKey } = p256();
    const sig = await signDetached(bytes('x'), privateKey, { alg: 'ES256', kid: 'p1' });
    forgetVerifiedSignatures();
    expect(Buffer.from(sig.signature, 'base64url')).toHaveLength(64);
    expect(await verifyDetached(bytes('x'), sig, publicKey)).toEqual({ typ: 'JOSE', alg: 'ES256', kid: 'p1' });
  });

  it('the protected header carries the claims, then typ, then the header (header wins)', async () => {
    const { privateKey } = p256();
    const sig = await signDetached(bytes('x'), privateKey, { alg: 'ES256', kid: 'p1', jku: 'https://a.example/jwks.json' }, { aud: 'b', typ: 'other', n: 3 });
    expect(Buffer.from(sig.protected, 'base64url').toString()).toBe('{"aud":"b","typ":"JOSE","n":3,"alg":"ES256","kid":"p1","jku":"https://a.example/jwks.json"}');
    expect(readProtectedHeader(sig)).toEqual({ aud: 'b', typ: 'JOSE', n: 3, alg: 'ES256', kid: 'p1', jku: 'https://a.example/jwks.json' });
  });

  it('WebCrypto keys (as jose imports them) sign and verify, converted once per key', async () => {
    for (const alg of ['ES256', 'EdDSA'] as const) {
      const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
      const sig = await signDetached(bytes('w'), privateKey, { alg, kid: 'w' });
      const again = await signDetached(bytes('w2'), privateKey, { alg, kid: 'w' });
      forgetVerifiedSignatures();
      expect((await verifyDetached(bytes('w'), sig, publicKey)).alg).toBe(alg);
      expect((await verifyDetached(bytes('w2'), again, publicKey)).alg).toBe(alg);
    }
  });

  it('refuses to sign with a key of another algorithm or curve', async () => {
    const cases: [KeyObject, 'ES256' | 'EdDSA'][] = [
      [ed().privateKey, 'ES256'],
      [generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey, 'ES256'],
      [generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey, 'ES256'],
      [p256().privateKey, 'EdDSA'],
      [generateKeyPairSync('ed448').privateKey, 'EdDSA'],
    ];
    for (const [key, alg] of cases) {
      const err = await expectCodeAsync(signDetached(bytes('x'), key, { alg, kid: 'k' }), 'invalid_request');
      expect(err.message).toBe(NOT_FIT);
      expect(err.details).toEqual({ alg });
    }
  });

  it('refuses to verify under a key of another algorithm or curve, naming the alg', async () => {
    const sig = await signDetached(bytes('x'), p256().privateKey, { alg: 'ES256', kid: 'p1' });
    for (const key of [ed().publicKey, generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey]) {
      const err = await expectCodeAsync(verifyDetached(bytes('x'), sig, key), 'invalid_request');
      expect(err.message).toBe(NOT_FIT);
      expect(err.details).toEqual({ alg: 'ES256' });
    }
    const edSig = await signDetached(bytes('x'), ed().privateKey, { alg: 'EdDSA', kid: 'e1' });
    const err = await expectCodeAsync(verifyDetached(bytes('x'), edSig, p256().publicKey), 'invalid_request');
    expect(err.message).toBe(NOT_FIT);
    expect(err.details).toEqual({ alg: 'EdDSA' });
  });

  it('a key that is no key at all is "does not verify" with the kid, not a crash', async () => {
    const sig = await signDetached(bytes('x'), p256().privateKey, { alg: 'ES256', kid: 'p1' });
    const err = await expectCodeAsync(verifyDetached(bytes('x'), sig, {} as KeyObject), 'invalid_request');
    expect(err.message).toBe(NOT_VERIFY);
    expect(err.details).toEqual({ kid: 'p1' });
    expect(err.cause).toBeInstanceOf(Error);
  });

  it('a wrong signature is "does not verify" with the kid', async () => {
    const { privateKey, publicKey } = p256();
    const sig = await signDetached(bytes('x'), privateKey, { alg: 'ES256', kid: 'p1' });
    const other = await signDetached(bytes('y'), privateKey, { alg: 'ES256', kid: 'p1' });
    const err = await expectCodeAsync(verifyDetached(bytes('x'), { ...sig, signature: other.signature }, publicKey), 'invalid_request');
    expect(err.message).toBe(NOT_VERIFY);
    expect(err.details).toEqual({ kid: 'p1' });
  });

  it('refuses a signature or protected header that is not unpadded base64url, anywhere in it', async () => {
    const { privateKey, publicKey } = p256();
    const sig = await signDetached(bytes('x'), privateKey, { alg: 'ES256', kid: 'p1' });
    const bad: DetachedSignature[] = [
      { ...sig, signature: `${sig.signature}=` },
      { ...sig, signature: `+${sig.signature}` },
      { ...sig, signature: `${sig.signature.slice(0, 10)}.${sig.signature.slice(10)}` },
      { ...sig, protected: `${sig.protected}=` },
      { ...sig, protected: ` ${sig.protected}` },
    ];
    for (const s of bad) {
      let err;
      try {
        err = await expectCodeAsync(verifyDetached(bytes('x'), s, publicKey), 'invalid_request');
      } catch (e) {
        throw new Error(`${JSON.stringify(s)}: ${String(e)}`);
      }
      if (err.message === 'signature protected header is not valid JOSE') continue; // jose refused the spelling first
      expect(err.message).toBe('signature is not base64url');
      expect(err.details).toEqual({ kid: 'p1' });
    }
  });
});

describe('readProtectedHeader', () => {
  it('accepts an unprotected header without alg or kid', () => {
    expect(readProtectedHeader(withHeader({ alg: 'ES256', kid: 'h1' }, { header: { note: 'x' } }))).toEqual({ alg: 'ES256', kid: 'h1' });
  });

  it('refuses alg or kid in the unprotected header', () => {
    for (const header of [{ alg: 'ES256' }, { kid: 'other' }]) {
      const err = expectCode(() => readProtectedHeader(withHeader({ alg: 'ES256', kid: 'h2' }, { header })), 'invalid_request');
      expect(err.message).toBe('alg and kid must be in the protected header');
    }
  });

  it('refuses a protected header that is not JOSE', () => {
    for (const p of ['!!!', b64([1]), Buffer.from('not json').toString('base64url')]) {
      const err = expectCode(() => readProtectedHeader({ protected: p, signature: 'AAAA' }), 'invalid_request');
      expect(err.message).toBe('signature protected header is not valid JOSE');
      expect(err.details).toEqual({});
    }
  });

  it('refuses algorithms off the allow-list, naming the alg (at most 32 characters)', () => {
    const cases: [unknown, string | undefined][] = [
      [{ alg: 'HS256', kid: 'h' }, 'HS256'],
      [{ alg: 'none', kid: 'h' }, 'none'],
      [{ alg: 'RS256', kid: 'h' }, 'RS256'],
      [{ alg: 'X'.repeat(40), kid: 'h' }, 'X'.repeat(32)],
      [{ kid: 'h' }, 'undefined'],
    ];
    for (const [h, alg] of cases) {
      const err = expectCode(() => readProtectedHeader(withHeader(h)), 'invalid_request');
      expect(err.message).toBe(NOT_ACCEPTABLE);
      expect(err.details).toEqual({ alg });
    }
  });

  it('requires a kid of 1..256 characters, typ JOSE if any, and a jku URL of at most 2048', () => {
    const refused = [
      { alg: 'EdDSA' },
      { alg: 'EdDSA', kid: '' },
      { alg: 'EdDSA', kid: 'k'.repeat(257) },
      { alg: 'EdDSA', kid: 'k', typ: 'JWT' },
      { alg: 'EdDSA', kid: 'k', jku: 'not a url' },
      { alg: 'EdDSA', kid: 'k', jku: `https://a.example/${'p'.repeat(2048)}` },
    ];
    for (const h of refused) expect(expectCode(() => readProtectedHeader(withHeader(h)), 'invalid_request').message).toBe(NOT_ACCEPTABLE);
    const accepted = [
      { alg: 'EdDSA', kid: 'k'.repeat(256) },
      { alg: 'EdDSA', kid: 'k', typ: 'JOSE' },
      { alg: 'EdDSA', kid: 'k', jku: 'https://a.example/jwks.json' },
    ];
    for (const h of accepted) expect(readProtectedHeader(withHeader(h))).toEqual(h);
  });

  it('refuses the JWS extensions crit and b64, each on its own', () => {
    for (const h of [
      { alg: 'ES256', kid: 'c', crit: ['exp'] },
      { alg: 'ES256', kid: 'c', b64: false },
    ]) {
      const err = expectCode(() => readProtectedHeader(withHeader(h)), 'invalid_request');
      expect(err.message).toBe('signature header uses a JWS extension Baton does not support');
    }
  });

  it('a header read once is returned again, and a refused one stays refused', () => {
    const s = withHeader({ alg: 'ES256', kid: 'again' });
    const first = readProtectedHeader(s);
    expect(readProtectedHeader(s)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    const bad = withHeader({ alg: 'HS256', kid: 'again' });
    expectCode(() => readProtectedHeader(bad), 'invalid_request');
    expectCode(() => readProtectedHeader(bad), 'invalid_request');
    // The cache is by protected text only: the unprotected header is checked every time.
    expectCode(() => readProtectedHeader({ ...s, header: { kid: 'x' } }), 'invalid_request');
  });
});
