/**
 * Detached JWS (RFC 7515 Appendix F) over canonical bytes, the form A2A §8.4
 * uses for Agent Card signatures and Baton uses for every signed record. The
 * payload is never carried: a verifier recomputes the canonical bytes itself,
 * so it checks the data it will act on, not a copy that travelled beside it.
 */
import { base64url, decodeProtectedHeader, flattenedVerify, FlattenedSign, type CryptoKey, type KeyObject } from 'jose';
import { z } from 'zod';
import { BatonError, invalidRequest } from '../errors.ts';

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

/** Signs `payload` and returns the detached signature object. */
export async function signDetached(
  payload: Uint8Array,
  key: SigningKey,
  header: { alg: SigningAlg; kid: string; jku?: string },
  /** Further protected members (e.g. the audience a push delivery is for). */
  claims: Readonly<Record<string, string | number>> = {},
): Promise<DetachedSignature> {
  const jws = await new FlattenedSign(payload).setProtectedHeader({ ...claims, typ: 'JOSE', ...header }).sign(key);
  return { protected: jws.protected!, signature: jws.signature };
}

/**
 * Reads the protected header of an untrusted signature, enforcing the alg
 * allow-list before any key lookup happens.
 */
export function readProtectedHeader(sig: DetachedSignature): ProtectedHeader {
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
  if (sig.header && ('alg' in sig.header || 'kid' in sig.header)) {
    // An unprotected alg/kid would be unauthenticated input steering key choice.
    throw invalidRequest('alg and kid must be in the protected header');
  }
  return parsed.data;
}

/** Verifies a detached signature over `payload`; throws invalid_request on any mismatch. */
export async function verifyDetached(payload: Uint8Array, sig: DetachedSignature, key: VerifyKey): Promise<ProtectedHeader> {
  const header = readProtectedHeader(sig);
  try {
    await flattenedVerify(
      { payload: base64url.encode(payload), protected: sig.protected, signature: sig.signature },
      key,
      { algorithms: [header.alg] },
    );
  } catch (cause) {
    if (cause instanceof BatonError) throw cause;
    throw invalidRequest('signature does not verify', { kid: header.kid }, cause);
  }
  return header;
}
