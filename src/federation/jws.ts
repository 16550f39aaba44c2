/**
 * Compact JWS for head statements and control notifications, signed with the
 * gateway's contract keys (kid from its JWKS) and verified only under the
 * JWKS the receiving side pinned for the sender — never a key named by the
 * message itself. ES256/EdDSA only (DESIGN: never `none` or HS*).
 */
import { CompactSign, compactVerify } from 'jose';
import { contextInvalidated } from '../errors.ts';
import { keyUnusableReason, type KeySet } from '../cards/jwks.ts';
import type { Keyring } from '../keys/keyring.ts';
import { canonicalText } from '../records/canonical.ts';
import { parseStrictJson } from '../records/strict-json.ts';

const ALGS = ['ES256', 'EdDSA'];

export async function signJws(keyring: Keyring, typ: string, payload: object): Promise<string> {
  const k = keyring.current('ES256');
  return new CompactSign(new TextEncoder().encode(canonicalText(payload as never))).setProtectedHeader({ alg: k.alg, kid: k.kid, typ }).sign(k.privateKey);
}

/**
 * Verifies under `keys` at `now`; any failure is context_invalidated (the
 * statement cannot establish authority). A statement is signed when it is
 * made, so a pinned key past its `exp`, before its `nbf` or revoked never
 * verifies one (A2A §8.4.3: "Expired or revoked keys MUST NOT be used for
 * verification").
 */
export async function verifyJws(jws: string, keys: KeySet, typ: string, now: Date): Promise<unknown> {
  try {
    const { payload, protectedHeader } = await compactVerify(
      jws,
      async (header) => {
        const key = header.kid === undefined ? undefined : keys.keys.get(header.kid);
        if (!key || key.alg !== header.alg || keyUnusableReason(keys, key, now)) throw new Error('unusable key');
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
