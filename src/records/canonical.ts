/**
 * RFC 8785 JSON Canonicalization Scheme. Signatures and digests are computed
 * over these bytes and nothing else; callers keep the bytes they signed rather
 * than re-serialising later.
 */
import canonicalize from 'canonicalize';
import { invalidRequest } from '../errors.ts';

const encoder = new TextEncoder();

/** JCS text of `value`. Rejects values JSON cannot represent faithfully. */
export function canonicalText(value: unknown): string {
  assertCanonicalisable(value, 0);
  const text = canonicalize(value);
  if (text === undefined) throw invalidRequest('value has no JSON representation');
  return text;
}

/** JCS UTF-8 bytes of `value`. */
export function canonicalBytes(value: unknown): Uint8Array {
  return encoder.encode(canonicalText(value));
}

// canonicalize (like JSON.stringify) maps NaN to null, drops undefined members
// and serialises lone surrogates as escapes; each would make the signed bytes
// disagree with what the signer meant, so refuse them up front.
function assertCanonicalisable(value: unknown, depth: number): void {
  if (depth > 128) throw invalidRequest('value nests too deeply to canonicalise');
  switch (typeof value) {
    case 'string':
      if (!value.isWellFormed()) throw invalidRequest('string holds a lone surrogate');
      return;
    case 'number':
      if (!Number.isFinite(value)) throw invalidRequest('non-finite number cannot be canonicalised');
      return;
    case 'boolean':
      return;
    case 'object':
      if (value === null) return;
      if (Array.isArray(value)) {
        for (const item of value) assertCanonicalisable(item, depth + 1);
        return;
      }
      if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) {
        throw invalidRequest('only plain objects can be canonicalised');
      }
      for (const [k, v] of Object.entries(value)) {
        if (!k.isWellFormed()) throw invalidRequest('key holds a lone surrogate');
        if (v === undefined) throw invalidRequest('undefined member cannot be canonicalised', { key: k });
        assertCanonicalisable(v, depth + 1);
      }
      return;
    default:
      throw invalidRequest(`a ${typeof value} cannot be canonicalised`);
  }
}
