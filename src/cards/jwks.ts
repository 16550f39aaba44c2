/**
 * JWKS documents (RFC 7517 §5) as Baton trusts them: public asymmetric keys
 * only, one per `kid`, each usable with exactly one allowed algorithm.
 *
 * Two optional members extend RFC 7517 (which says unknown members MUST be
 * ignored, so stock verifiers are unaffected): per-key `nbf`/`exp`
 * (NumericDate, RFC 7519 §2) bounding when the key may verify, and a
 * set-level `revoked_kids` list. A2A §8.4.3: "Expired or revoked keys MUST
 * NOT be used for verification."
 */
import { calculateJwkThumbprint, importJWK, type JWK } from 'jose';
import { z } from 'zod';
import { invalidRequest } from '../errors.ts';
import { summariseIssues } from '../records/envelope.ts';
import type { SigningAlg, VerifyKey } from '../records/signature.ts';
import { parseStrictJson } from '../records/strict-json.ts';

/** A JWKS is small; anything bigger is not a key set. */
export const MAX_JWKS_BYTES = 64 * 1024;

const PublicJwk = z.looseObject({
  kty: z.enum(['EC', 'OKP']),
  kid: z.string().min(1).max(256),
  crv: z.enum(['P-256', 'Ed25519']),
  x: z.string().min(1).max(512),
  y: z.string().min(1).max(512).optional(),
  alg: z.enum(['ES256', 'EdDSA']).optional(),
  use: z.literal('sig').optional(),
  nbf: z.number().int().nonnegative().optional(),
  exp: z.number().int().nonnegative().optional(),
});

const JwksDocument = z.looseObject({
  keys: z.array(z.unknown()).max(64),
  revoked_kids: z.array(z.string().min(1).max(256)).max(256).optional(),
});

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** One verified-shape public key. */
export interface TrustedKey {
  kid: string;
  alg: SigningAlg;
  jwk: JWK;
  key: VerifyKey;
  /** RFC 7638 thumbprint: names the exact key in verification records. */
  thumbprint: string;
  notBefore?: Date;
  notAfter?: Date;
}

/** A parsed key set: keys by kid plus revoked kids. */
export interface KeySet {
  keys: ReadonlyMap<string, TrustedKey>;
  revoked: ReadonlySet<string>;
}

/** Parses raw JWKS bytes strictly; a private, symmetric, unknown-curve or duplicate-kid key fails the whole set. */
export async function parseJwks(input: Uint8Array | string): Promise<KeySet> {
  const doc = JwksDocument.safeParse(parseStrictJson(input, { maxBytes: MAX_JWKS_BYTES }));
  if (!doc.success) throw invalidRequest('JWKS is malformed', { issues: summariseIssues(doc.error) });
  const keys = new Map<string, TrustedKey>();
  for (const [i, raw] of doc.data.keys.entries()) {
    const key = await readKey(raw, i);
    if (keys.has(key.kid)) throw invalidRequest('JWKS holds two keys with one kid', { kid: key.kid });
    keys.set(key.kid, key);
  }
  return { keys, revoked: new Set(doc.data.revoked_kids ?? []) };
}

async function readKey(raw: unknown, index: number): Promise<TrustedKey> {
  if (typeof raw === 'object' && raw !== null && PRIVATE_MEMBERS.some((m) => m in raw)) {
    // Never echo the member: it is secret material that should not have been published.
    throw invalidRequest('JWKS holds private or symmetric key material', { index });
  }
  const parsed = PublicJwk.safeParse(raw);
  if (!parsed.success) throw invalidRequest('JWKS key is not an allowed public key', { index, issues: summariseIssues(parsed.error) });
  const jwk = parsed.data;
  const alg: SigningAlg = jwk.kty === 'EC' ? 'ES256' : 'EdDSA';
  const consistent = jwk.kty === 'EC' ? jwk.crv === 'P-256' && jwk.y !== undefined : jwk.crv === 'Ed25519' && jwk.y === undefined;
  if (!consistent || (jwk.alg !== undefined && jwk.alg !== alg)) throw invalidRequest('JWKS key type, curve and alg disagree', { kid: jwk.kid });
  const { nbf, exp, ...material } = jwk;
  let key: VerifyKey;
  try {
    key = (await importJWK(material as JWK, alg)) as VerifyKey;
  } catch (cause) {
    throw invalidRequest('JWKS key cannot be imported', { kid: jwk.kid }, cause);
  }
  return {
    kid: jwk.kid,
    alg,
    jwk: material as JWK,
    key,
    thumbprint: await calculateJwkThumbprint(material as JWK, 'sha256'),
    ...(nbf !== undefined ? { notBefore: new Date(nbf * 1000) } : {}),
    ...(exp !== undefined ? { notAfter: new Date(exp * 1000) } : {}),
  };
}

/** Why a key may not verify at `now`, or undefined when it may. */
export function keyUnusableReason(set: KeySet, key: TrustedKey, now: Date): 'revoked' | 'expired' | 'not_yet_valid' | undefined {
  if (set.revoked.has(key.kid)) return 'revoked';
  if (key.notAfter && now.getTime() >= key.notAfter.getTime()) return 'expired';
  if (key.notBefore && now.getTime() < key.notBefore.getTime()) return 'not_yet_valid';
  return undefined;
}
