/**
 * Counts the SHA-256 digests this worker computes (node:crypto's one-shot
 * `hash`, which every record, event and request digest goes through:
 * src/records/digest.ts) while `when()` holds: DESIGN "A turn is a pure plan,
 * then one commit" — nothing is canonicalised or hashed while a write
 * transaction holds the lock. The builtin's export is replaced and the ESM
 * bindings resynchronised (node:module syncBuiltinESMExports), so modules
 * that imported `hash` by name see the wrapper too.
 */
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';

export interface HashTally {
  /** Digests counted since the last reset. */
  readonly count: number;
  reset(): void;
  restore(): void;
}

export function countHashes(when: () => boolean): HashTally {
  const target = crypto as unknown as { hash: (...a: unknown[]) => unknown };
  const original = target.hash;
  let count = 0;
  target.hash = function (this: unknown, ...args: unknown[]) {
    if (when()) count++;
    return original.apply(this, args);
  };
  syncBuiltinESMExports();
  return {
    get count() {
      return count;
    },
    reset: () => void (count = 0),
    restore: () => {
      target.hash = original;
      syncBuiltinESMExports();
    },
  };
}
