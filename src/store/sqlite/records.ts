/** Append-only, content-addressed record storage on SQLite. */
import { invalidRequest, storageError } from '../../errors.ts';
import { canonicalText } from '../../records/canonical.ts';
import { computeContentDigest, type Envelope } from '../../records/envelope.ts';
import type { PutResult, RecordStore } from '../port.ts';
import { immediate, type Db } from './database.ts';

interface Row {
  seq: bigint;
  record_id: string;
  revision_id: string;
  content_digest: string;
  document: string;
}

export class SqliteRecords implements RecordStore {
  private readonly byRevision;
  private readonly byDigest;
  private readonly head;
  private readonly latest;
  private readonly revisions;
  private readonly insert;
  private readonly setHead;

  constructor(protected readonly db: Db) {
    this.byRevision = db.prepare<[string], Row>('SELECT * FROM records WHERE revision_id = ?');
    this.byDigest = db.prepare<[string], Row>('SELECT * FROM records WHERE content_digest = ?');
    this.head = db.prepare<[string], { revision_id: string }>('SELECT revision_id FROM record_heads WHERE record_id = ?');
    this.latest = db.prepare<[string], Row>(
      'SELECT r.* FROM record_heads h JOIN records r ON r.seq = h.seq WHERE h.record_id = ?',
    );
    this.revisions = db.prepare<[string], Row>('SELECT * FROM records WHERE record_id = ? ORDER BY seq');
    this.insert = db.prepare(
      `INSERT INTO records(record_id, revision_id, content_digest, schema_ref, prior_revision, document, stored_at)
       VALUES (@record_id, @revision_id, @content_digest, @schema_ref, @prior, @document, @stored_at)`,
    );
    this.setHead = db.prepare(
      `INSERT INTO record_heads(record_id, revision_id, seq) VALUES (?, ?, ?)
       ON CONFLICT(record_id) DO UPDATE SET revision_id = excluded.revision_id, seq = excluded.seq`,
    );
  }

  async putRecord(record: Envelope): Promise<PutResult> {
    if (computeContentDigest(record) !== record.content_digest) {
      throw invalidRequest('record content digest does not match its bytes', { record_id: record.record_id });
    }
    const document = canonicalText(record);
    return immediate(this.db, () => {
      const existing = this.byRevision.get(record.revision_id);
      if (existing) {
        if (existing.document === document) return 'exists';
        throw invalidRequest('a different record already holds this revision id', { revision_id: record.revision_id });
      }
      const head = this.head.get(record.record_id);
      const prior = record.prior_revision_ref;
      if (head && prior?.revision_id !== head.revision_id) {
        throw invalidRequest('a new revision must name the current head as its prior revision', { record_id: record.record_id });
      }
      if (!head && prior) throw invalidRequest('prior revision is unknown', { record_id: record.record_id });
      if (prior && prior.object_id !== record.record_id) throw invalidRequest('prior revision belongs to another record');
      const info = this.insert.run({
        record_id: record.record_id,
        revision_id: record.revision_id,
        content_digest: record.content_digest,
        schema_ref: record.schema_ref,
        prior: prior?.revision_id ?? null,
        document,
        stored_at: new Date().toISOString(),
      });
      this.setHead.run(record.record_id, record.revision_id, info.lastInsertRowid);
      return 'inserted';
    });
  }

  async getRecord(recordId: string, revisionId?: string): Promise<Envelope | undefined> {
    const row = revisionId === undefined ? this.latest.get(recordId) : this.byRevision.get(revisionId);
    if (row && row.record_id !== recordId) return undefined;
    return row && decode(row);
  }

  async getByDigest(digest: string): Promise<Envelope | undefined> {
    const row = this.byDigest.get(digest);
    return row && decode(row);
  }

  async listRevisions(recordId: string): Promise<Envelope[]> {
    return this.revisions.all(recordId).map(decode);
  }
}

// Stored bytes are re-checked on every read: a flipped bit on disk must
// surface as storage_error, not as a record someone then acts on.
function decode(row: Row): Envelope {
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
