/**
 * Opaque, never-reused identifiers (RW-003 §2 RecordId, ADR-0014 "Logical IDs
 * and references"). 128 random bits make reuse a non-event; the prefix is for
 * humans only — nothing may parse scope or type out of an id.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { invalidRequest, limitExceeded } from '../errors.ts';
import { RECORD_LIMITS } from './limits.ts';

/** Source of fresh ids; injected so the core stays deterministic under test. */
export interface IdSource {
  next(prefix: string): string;
}

const PREFIX = /^[a-z][a-z0-9_]{0,15}$/;

/** Production id source: `<prefix>_<26 chars of base32 randomness>`. */
export const randomIds: IdSource = {
  next(prefix) {
    if (!PREFIX.test(prefix)) throw new TypeError(`bad id prefix ${JSON.stringify(prefix)}`);
    return `${prefix}_${base32(random16())}`;
  },
};

// CSPRNG bytes fetched 4 KiB at a time and handed out 16 at a time, each byte
// once (as crypto.randomUUID does with its cache): one call per 256 ids instead
// of one per id, which showed in the request path's profile (issue #15).
let pool = Buffer.alloc(0);
let offset = 0;
function random16(): Uint8Array {
  if (offset + 16 > pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  offset += 16;
  return pool.subarray(offset - 16, offset);
}

/** Deterministic ids for tests and replay: `<prefix>_<seed>_<n>`. */
export function sequentialIds(seed = 't'): IdSource {
  let n = 0;
  return { next: (prefix) => `${prefix}_${seed}_${(++n).toString().padStart(6, '0')}` };
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let acc = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(acc >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(acc << (5 - bits)) & 31];
  return out;
}

// C0, DEL, C1 and the Unicode line/paragraph separators: none belongs in an id.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;

/** Checks an external identifier: well-formed, no controls, at most 2 KiB UTF-8. */
export function checkIdentifier(value: string, field = 'identifier'): string {
  if (value.length === 0) throw invalidRequest(`${field} is empty`, { field });
  if (!value.isWellFormed()) throw invalidRequest(`${field} holds a lone surrogate`, { field });
  if (CONTROL.test(value)) throw invalidRequest(`${field} holds a control character`, { field });
  if (Buffer.byteLength(value, 'utf8') > RECORD_LIMITS.maxIdentifierBytes) {
    throw limitExceeded(`${field} exceeds ${RECORD_LIMITS.maxIdentifierBytes} bytes`, { field });
  }
  return value;
}

/** zod form of {@link checkIdentifier} for schemas at the edge. */
export const Identifier = z.string().superRefine((value, ctx) => {
  try {
    checkIdentifier(value);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
  }
});
