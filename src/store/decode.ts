/** Decoding stored records, shared by both adapters. */
import { storageError } from '../errors.ts';
import { computeContentDigest, type Envelope } from '../records/envelope.ts';

export interface RecordDocRow {
  record_id: string;
  revision_id: string;
  content_digest: string;
  document: string;
}

/**
 * Stored bytes are re-checked on every read, in both adapters: a flipped bit
 * on disk must surface as storage_error, not as a record someone acts on.
 */
export function decodeRecord(row: RecordDocRow): Envelope {
  let doc: Envelope;
  try {
    doc = JSON.parse(row.document) as Envelope;
  } catch (cause) {
    throw storageError('stored record is not valid JSON', { revision_id: row.revision_id }, cause);
  }
  if (computeContentDigest(doc) !== row.content_digest || doc.content_digest !== row.content_digest) {
    throw storageError('stored record does not match its digest', { revision_id: row.revision_id });
  }
  return doc;
}
