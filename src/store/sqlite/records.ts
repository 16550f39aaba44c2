/** Reads of the append-only record table; writes go through the shared program. */
import { storageError } from '../../errors.ts';
import { computeContentDigest, type Envelope } from '../../records/envelope.ts';
import type { Db } from './database.ts';

interface Row {
  record_id: string;
  revision_id: string;
  content_digest: string;
  document: string;
}

export function recordReads(db: Db) {
  const byRevision = db.prepare<[string], Row>('SELECT * FROM records WHERE revision_id = ?');
  const byDigest = db.prepare<[string], Row>('SELECT * FROM records WHERE content_digest = ?');
  const latest = db.prepare<[string], Row>('SELECT r.* FROM record_heads h JOIN records r ON r.revision_id = h.revision_id WHERE h.record_id = ?');
  const revisions = db.prepare<[string], Row>('SELECT * FROM records WHERE record_id = ? ORDER BY seq');
  return {
    get(recordId: string, revisionId?: string): Envelope | undefined {
      const row = revisionId === undefined ? latest.get(recordId) : byRevision.get(revisionId);
      return row && row.record_id === recordId ? decodeRecord(row) : undefined;
    },
    byDigest: (digest: string) => {
      const row = byDigest.get(digest);
      return row && decodeRecord(row);
    },
    revisions: (recordId: string) => revisions.all(recordId).map(decodeRecord),
  };
}

/**
 * Stored bytes are re-checked on every read, in both adapters: a flipped bit
 * on disk must surface as storage_error, not as a record someone acts on.
 */
export function decodeRecord(row: Row): Envelope {
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
