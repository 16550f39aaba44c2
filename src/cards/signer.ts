/**
 * Signing an Agent Card (A2A §8.4.2): one detached JWS per signing key over
 * the §8.4.1 payload, protected header {alg, typ: "JOSE", kid, jku?}. The
 * payload is computed once and every key signs exactly those bytes.
 */
import type { JsonValue } from '../records/strict-json.ts';
import { signDetached, type DetachedSignature, type SigningAlg, type SigningKey } from '../records/signature.ts';
import { cardSigningBytes } from './canonical-card.ts';

export interface CardSigningKey {
  kid: string;
  alg: SigningAlg;
  privateKey: SigningKey;
}

/** Returns a copy of `card` whose `signatures` are exactly one per key (previous ones dropped). */
export async function signCard(
  card: { [key: string]: JsonValue },
  keys: readonly CardSigningKey[],
  opts: { jku?: string } = {},
): Promise<{ [key: string]: JsonValue }> {
  if (keys.length === 0) throw new TypeError('no signing key available for Agent Cards');
  const { signatures: _old, ...unsigned } = card;
  const payload = cardSigningBytes(unsigned);
  const signatures: Array<{ protected: string; signature: string }> = [];
  for (const key of keys) {
    const sig: DetachedSignature = await signDetached(payload, key.privateKey, { alg: key.alg, kid: key.kid, ...(opts.jku ? { jku: opts.jku } : {}) });
    signatures.push({ protected: sig.protected, signature: sig.signature });
  }
  return { ...{}, ...unsigned, signatures };
}
