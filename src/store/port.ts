/**
 * The storage port. It offers domain operations, not a generic transaction:
 * better-sqlite3 transactions are synchronous and cannot span an await, so
 * each adapter makes each operation atomic on its own and shares the pure
 * decision code from the core.
 */
import type { Envelope } from '../records/envelope.ts';

export type PutResult = 'inserted' | 'exists';

/** Append-only, content-addressed record storage (RW-003 §1: every record is immutable). */
export interface RecordStore {
  /**
   * Stores one sealed revision. Re-storing the identical revision is a no-op
   * ('exists'); a different record under the same revision id, or a later
   * revision that does not name the current head as its prior, is invalid_request.
   */
  putRecord(record: Envelope): Promise<PutResult>;
  /** The newest revision of `recordId`, or the exact one when `revisionId` is given. */
  getRecord(recordId: string, revisionId?: string): Promise<Envelope | undefined>;
  /** The revision whose content digest is `digest`. */
  getByDigest(digest: string): Promise<Envelope | undefined>;
  /** Every revision of `recordId`, oldest first. */
  listRevisions(recordId: string): Promise<Envelope[]>;
}

export interface Store extends RecordStore {
  /** Cheap liveness probe for /readyz; throws storage_error when the store is unusable. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
