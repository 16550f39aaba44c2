/** putRecord as a transaction program: append-only, head-chained revisions. */
import { invalidRequest } from '../errors.ts';
import { canonicalText } from './canonical.ts';
import { computeContentDigest, type Envelope } from './envelope.ts';
import type { PutResult } from '../store/port.ts';
import { tx, type Program, type RecordRow } from '../store/tx/ops.ts';
import { ridersOf, type DetachedContent } from './detached.ts';
import { rememberStored } from './decode.ts';

export function* putRecord(record: Envelope, at: string): Program<PutResult> {
  const document = checkedDocument(record);
  const existing = yield* tx('recordByRevision', record.revision_id);
  if (existing) {
    if (existing.document === document) return 'exists';
    throw invalidRequest('a different record already holds this revision id', { revision_id: record.revision_id });
  }
  const head = yield* tx('recordHead', record.record_id);
  const prior = record.prior_revision_ref;
  if (prior && prior.object_id !== record.record_id) throw invalidRequest('prior revision belongs to another record');
  if (head !== undefined && prior?.revision_id !== head) {
    // `head_moved`: another writer revised the record first; a writer may rebuild on the new head and retry.
    throw invalidRequest('a new revision must name the current head as its prior revision', { record_id: record.record_id, conflict: 'head_moved' });
  }
  if (head === undefined && prior) throw invalidRequest('prior revision is unknown', { record_id: record.record_id });
  if (head !== undefined && prior && (yield* tx('recordByRevision', head))?.content_digest !== prior.content_digest) {
    // The prior ref is an exact revision ref: the right id with another digest names a revision that never existed.
    throw invalidRequest('prior revision digest does not match the current head', { record_id: record.record_id });
  }
  yield* tx('insertRecord', recordRowOf(record, document, at));
  yield* tx('setRecordHead', record.record_id, record.revision_id);
  // Content the record names by digest only, in the same transaction (src/records/detached.ts).
  for (const c of ridersOf(record)) yield* tx('insertContent', contentRowOf(c, at));
  rememberStored(record, document);
  return 'inserted';
}

/** The record's canonical text, once its content digest is proven to be of those bytes. */
export function checkedDocument(record: Envelope): string {
  if (computeContentDigest(record) !== record.content_digest) {
    throw invalidRequest('record content digest does not match its bytes', { record_id: record.record_id });
  }
  return canonicalText(record);
}

export function recordRowOf(record: Envelope, document: string, at: string): RecordRow {
  return {
    record_id: record.record_id,
    revision_id: record.revision_id,
    content_digest: record.content_digest,
    schema_ref: record.schema_ref,
    prior_revision: record.prior_revision_ref?.revision_id ?? null,
    document,
    stored_at: at,
  };
}

export const contentRowOf = (c: DetachedContent, at: string) => ({ digest: c.digest, kind: c.kind, document: c.document, stored_at: at });
