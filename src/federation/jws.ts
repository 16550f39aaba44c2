/**
 * Compact JWS for head statements and control notifications, signed with the
 * gateway's contract keys (kid from its JWKS) and verified only under the
 * JWKS the receiving side pinned for the sender — never a key named by the
 * message itself. ES256/EdDSA only (DESIGN: never `none` or HS*).
 */
import { CompactSign, compactVerify } from 'jose';
import { contextInvalidated } from '../errors.ts';
import type { KeySet } from '../cards/jwks.ts';
import type { Keyring } from '../keys/keyring.ts';
import { canonicalText } from '../records/canonical.ts';
import { parseStrictJson } from '../records/strict-json.ts';

const ALGS = ['ES256', 'EdDSA'];

export async function signJws(keyring: Keyring, typ: string, payload: object): Promise<string> {
  const k = keyring.current('ES256');
  return new CompactSign(new TextEncoder().encode(canonicalText(payload as never))).setProtectedHeader({ alg: k.alg, kid: k.kid, typ }).sign(k.privateKey);
}

/** Verifies under `keys`; any failure is context_invalidated (the statement cannot establish authority). */
export async function verifyJws(jws: string, keys: KeySet, typ: string): Promise<unknown> {
  try {
    const { payload, protectedHeader } = await compactVerify(
      jws,
      async (header) => {
        const kid = header.kid;
        if (!kid || keys.revoked.has(kid)) throw new Error('unknown key');
        const key = keys.keys.get(kid);
        if (!key || key.alg !== header.alg) throw new Error('unknown key');
        return key.key;
      },
      { algorithms: ALGS },
    );
    if (protectedHeader.typ !== typ) throw new Error('wrong typ');
    return parseStrictJson(payload, { maxBytes: 128 * 1024 });
  } catch {
    throw contextInvalidated('signed statement did not verify under the pinned keys', { reason: 'bad_signature' });
  }
}
