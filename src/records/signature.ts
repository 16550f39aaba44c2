/**
 * Detached JWS (RFC 7515 Appendix F) over canonical bytes, the form A2A §8.4
 * uses for Agent Card signatures and Baton uses for every signed record. The
 * payload is never carried: a verifier recomputes the canonical bytes itself,
 * so it checks the data it will act on, not a copy that travelled beside it.
 */
import { KeyObject, sign as cryptoSign, verify as cryptoVerify, type webcrypto } from 'node:crypto';
import { decodeProtectedHeader, type CryptoKey } from 'jose';
import { z } from 'zod';
import { BatonError, invalidRequest } from '../errors.ts';
import { Lru } from './lru.ts';
import { freezeCanonical, isCanonicalFrozen } from './canonical.ts';
import { provenBefore, provenOnRecord, rememberProven, rememberProvenOnRecord } from './verified-signatures.ts';

/** Only asymmetric algorithms with a pinned curve; never `none` or HS*. */
export const ALLOWED_ALGS = ['ES256', 'EdDSA'] as const;
export type SigningAlg = (typeof ALLOWED_ALGS)[number];

/** A2A AgentCardSignature: `{protected, signature, header?}` without payload. */
export const DetachedSignature = z.strictObject({
  protected: z.string().min(1).max(4096),
  signature: z.string().min(1).max(1024),
  header: z.record(z.string(), z.unknown()).optional(),
});
export type DetachedSignature = z.infer<typeof DetachedSignature>;

export const ProtectedHeader = z.looseObject({
  alg: z.enum(ALLOWED_ALGS),
  typ: z.literal('JOSE').optional(),
  kid: z.string().min(1).max(256),
  jku: z.url().max(2048).optional(),
});
export type ProtectedHeader = z.infer<typeof ProtectedHeader>;

export type SigningKey = CryptoKey | KeyObject;
export type VerifyKey = CryptoKey | KeyObject;

/**
 * Signs `payload` and returns the detached signature object. The JWS is
 * computed with node:crypto's synchronous primitives (measured ~5× cheaper
 * per signature than jose's WebCrypto path on the hot path, DESIGN); jose
 * keeps the key formats. Any JWS implementation verifies the result.
 */
export async function signDetached(
  payload: Uint8Array,
  key: SigningKey,
  header: { alg: SigningAlg; kid: string; jku?: string },
  /** Further protected members (e.g. the audience a push delivery is for). */
  claims: Readonly<Record<string, string | number>> = {},
): Promise<DetachedSignature> {
  const { protectedB64, input, signature, k } = sign(payload, key, header, claims);
  rememberProven(input, signature, k); // made by this key over these bytes: it verifies (verified-signatures.ts)
  return { protected: protectedB64, signature: signature.toString('base64url') };
}

/**
 * `signDetached` for a signature that a deep-frozen record will carry, where
 * the caller remembers the proof on that record ({@link rememberProvenOn}):
 * the signing input is not hashed for the byte-keyed cache as well (issue
 * #24: two sha256 of whole contracts per delegated call). An equal record
 * that is another object (read back after the decode cache let it go, or in
 * another process) is verified by ECDSA/EdDSA once.
 */
export function signDetachedForRecord(payload: Uint8Array, key: SigningKey, header: { alg: SigningAlg; kid: string }): DetachedSignature {
  const { protectedB64, signature } = sign(payload, key, header, {});
  return { protected: protectedB64, signature: signature.toString('base64url') };
}

function sign(payload: Uint8Array, key: SigningKey, header: { alg: SigningAlg; kid: string; jku?: string }, claims: Readonly<Record<string, string | number>>): { protectedB64: string; input: Buffer; signature: Buffer; k: KeyObject } {
  const protectedB64 = Buffer.from(JSON.stringify({ ...{}, ...claims, typ: 'JOSE', ...header })).toString('base64url');
  const input = signingInput(protectedB64, payload);
  const k = keyObjectOf(key);
  checkKeyFor(header.alg, k);
  const signature = header.alg === 'ES256' ? cryptoSign('sha256', input, { key: k, dsaEncoding: 'ieee-p1363' }) : cryptoSign(null, input, k);
  return { protectedB64, input, signature, k };
}

const B64URL = /^[A-Za-z0-9_-]+$/;

/** RFC 7515 §5.1: ASCII(BASE64URL(protected) || '.' || BASE64URL(payload)). */
function signingInput(protectedB64: string, payload: Uint8Array): Buffer {
  return Buffer.from(`${protectedB64}.${Buffer.from(payload).toString('base64url')}`, 'ascii');
}

/** WebCrypto keys (what jose imports) as node:crypto KeyObjects, converted once per key. */
const keyObjects = new WeakMap<object, KeyObject>();
function keyObjectOf(key: SigningKey | VerifyKey): KeyObject {
  if (key instanceof KeyObject) return key;
  let k = keyObjects.get(key);
  if (!k) keyObjects.set(key, (k = KeyObject.from(key as webcrypto.CryptoKey)));
  return k;
}

/** The key must be of the algorithm's type (RFC 7518 §3.4 P-256 for ES256, RFC 8037 Ed25519 for EdDSA): no key confusion. */
function checkKeyFor(alg: SigningAlg, k: KeyObject): void {
  const ok = alg === 'ES256' ? k.asymmetricKeyType === 'ec' && k.asymmetricKeyDetails?.namedCurve === 'prime256v1' : k.asymmetricKeyType === 'ed25519';
  if (!ok) throw invalidRequest('the key does not fit the signature algorithm', { alg });
}

/**
 * Reads the protected header of an untrusted signature, enforcing the alg
 * allow-list before any key lookup happens.
 */
export function readProtectedHeader(sig: DetachedSignature): ProtectedHeader {
  // The protected header depends on its text alone, and one key's header text repeats on
  // every record it signs: read once per distinct text (issue #15), shared deep-frozen.
  let header = headers.get(sig.protected);
  if (header === undefined) headers.set(sig.protected, (header = freezeCanonical(readProtected(sig.protected))));
  if (sig.header && ('alg' in sig.header || 'kid' in sig.header)) {
    // An unprotected alg/kid would be unauthenticated input steering key choice.
    throw invalidRequest('alg and kid must be in the protected header');
  }
  return header;
}

/** Protected headers already read, by their exact base64url text (successes only). */
const headers = new Lru<string, ProtectedHeader>(256);

function readProtected(protectedB64: string): ProtectedHeader {
  const sig = { protected: protectedB64 };
  let raw: unknown;
  try {
    raw = decodeProtectedHeader({ protected: sig.protected });
  } catch (cause) {
    throw invalidRequest('signature protected header is not valid JOSE', {}, cause);
  }
  const parsed = ProtectedHeader.safeParse(raw);
  if (!parsed.success) {
    const alg = typeof raw === 'object' && raw !== null ? String((raw as Record<string, unknown>).alg).slice(0, 32) : undefined;
    throw invalidRequest('signature header is not acceptable (alg allow-list: ES256, EdDSA; kid required)', { alg });
  }
  // No JWS extension is understood here (RFC 7515 §4.1.11 `crit`, RFC 7797 unencoded payloads): refuse rather than misread.
  if (typeof raw === 'object' && raw !== null && ('crit' in raw || 'b64' in raw)) throw invalidRequest('signature header uses a JWS extension Baton does not support');
  return parsed.data;
}

/**
 * Whether signature `index` of `record` is known to verify with `key`: only
 * for the very key material it was proven or made with (verified-signatures.ts),
 * and only for a deep-frozen record, the only kind {@link rememberProvenOn}
 * enters (its bytes cannot have changed since).
 */
export function provenOn(record: object, index: number, key: VerifyKey): boolean {
  return provenOnRecord(record, index, keyObjectOf(key));
}

/** Notes that signature `index` of `record`, if deep-frozen, was just verified with, or made by, `key`. */
export function rememberProvenOn(record: object, index: number, key: SigningKey | VerifyKey): void {
  if (isCanonicalFrozen(record)) rememberProvenOnRecord(record, index, keyObjectOf(key));
}

/** Verifies a detached signature over `payload`; throws invalid_request on any mismatch. */
export async function verifyDetached(payload: Uint8Array, sig: DetachedSignature, key: VerifyKey): Promise<ProtectedHeader> {
  const header = readProtectedHeader(sig);
  // RFC 7515 §2: base64url without padding; anything else is not this signature in another spelling.
  if (!B64URL.test(sig.signature) || !B64URL.test(sig.protected)) throw invalidRequest('signature is not base64url', { kid: header.kid });
  let ok = false;
  try {
    const k = keyObjectOf(key);
    checkKeyFor(header.alg, k);
    const input = signingInput(sig.protected, payload);
    const signature = Buffer.from(sig.signature, 'base64url');
    // Keyed by the exact input, signature and key, never by an id (verified-signatures.ts).
    ok = provenBefore(input, signature, k);
    if (!ok) {
      ok = header.alg === 'ES256' ? cryptoVerify('sha256', input, { key: k, dsaEncoding: 'ieee-p1363' }, signature) : cryptoVerify(null, input, k, signature);
      if (ok) rememberProven(input, signature, k);
    }
  } catch (cause) {
    if (cause instanceof BatonError) throw cause;
    throw invalidRequest('signature does not verify', { kid: header.kid }, cause);
  }
  if (!ok) throw invalidRequest('signature does not verify', { kid: header.kid });
  return header;
}
