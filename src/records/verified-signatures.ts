/**
 * Signatures already proven good, so an immutable record's signature is
 * checked by ECDSA/EdDSA once, not on every request that presents it again
 * (issue #15: "verify a chain's signatures once per contract revision").
 *
 * Safety rests on the key: an entry names the sha256 of the exact signing
 * input (protected header and payload bytes, RFC 7515 §5.1), the exact
 * signature bytes and the SHA-256 thumbprint of the exact public key (SPKI
 * DER). A hit therefore means "this very key verified this very signature
 * over these very bytes before" — a tampered payload, header, signature or a
 * different key is a different entry and goes to the real verification.
 * Nothing is keyed by a record id or kid. Only successes are entered; the
 * cache is an LRU of {@link MAX_ENTRIES} (about 1.6 MB at most).
 *
 * A signature Baton has just made itself is entered at signing: it verifies
 * by construction (the public half of the key that made it).
 */
import { createPublicKey, hash, type KeyObject } from 'node:crypto';
import { Lru } from './lru.ts';

/** Bound on remembered signatures. */
export const MAX_ENTRIES = 10_000;

const proven = new Lru<string, true>(MAX_ENTRIES);
const stats = { hits: 0, misses: 0, recordHits: 0 };

/** SPKI thumbprints, computed once per key object. */
const thumbprints = new WeakMap<KeyObject, string>();
function thumbprintOf(key: KeyObject): string {
  let t = thumbprints.get(key);
  if (t === undefined) {
    const pub = key.type === 'private' ? createPublicKey(key) : key;
    t = hash('sha256', pub.export({ type: 'spki', format: 'der' }), 'base64url');
    thumbprints.set(key, t);
  }
  return t;
}

function entryOf(input: Buffer, signature: Buffer, key: KeyObject): string {
  const h = hash('sha256', input, 'base64url');
  return `${h}.${signature.toString('base64url')}.${thumbprintOf(key)}`;
}

/** Whether exactly this (signing input, signature, key) verified before. */
export function provenBefore(input: Buffer, signature: Buffer, key: KeyObject): boolean {
  const hit = proven.get(entryOf(input, signature, key)) === true;
  if (hit) stats.hits++;
  else stats.misses++;
  return hit;
}

/** Records a successful verification (or a signature just made with `key`). */
export function rememberProven(input: Buffer, signature: Buffer, key: KeyObject): void {
  proven.set(entryOf(input, signature, key), true);
}

/**
 * Per deep-frozen record (src/records/canonical.ts `freezeCanonical`): the
 * thumbprint of the key each of its signatures, by position, was proven with
 * (or made with). The record's signing bytes and signatures cannot change, so
 * record, position and key thumbprint name the same (input, signature, key)
 * as an entry above, without encoding and hashing the input again (issue #24:
 * a delegated call verified its freshly signed contracts three times, hashing
 * each signing input every time). Weak: it lives as long as the record does.
 */
let provenRecords = new WeakMap<object, (string | undefined)[]>();

/** Whether signature `index` of the deep-frozen `record` was proven with `key` (or made with its private half). */
export function provenOnRecord(record: object, index: number, key: KeyObject): boolean {
  const hit = provenRecords.get(record)?.[index] === thumbprintOf(key);
  if (hit) stats.recordHits++;
  return hit;
}

/** Records that signature `index` of the deep-frozen `record` verifies with `key`; the caller has proven it (or just made it). */
export function rememberProvenOnRecord(record: object, index: number, key: KeyObject): void {
  let keys = provenRecords.get(record);
  if (keys === undefined) provenRecords.set(record, (keys = []));
  keys[index] = thumbprintOf(key);
}

/** Hits, misses and size, for tests and diagnostics. */
export function verifiedSignatureStats(): { hits: number; misses: number; recordHits: number; size: number } {
  return { ...{}, ...stats, size: proven.size };
}

/** Empties the cache (tests). */
export function forgetVerifiedSignatures(): void {
  proven.clear();
  provenRecords = new WeakMap();
  stats.hits = 0;
  stats.misses = 0;
  stats.recordHits = 0;
}
