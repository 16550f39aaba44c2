/** Decoding stored records, shared by both adapters. */
import { storageError } from '../errors.ts';
import { freezeCanonical, isCanonicalFrozen } from './canonical.ts';
import { computeContentDigest, type Envelope } from './envelope.ts';
import { Lru } from './lru.ts';

export interface RecordDocRow {
  record_id: string;
  revision_id: string;
  content_digest: string;
  document: string;
}

/**
 * Records decoded from exactly these stored bytes, by revision (issue #15:
 * the request path reads the same contracts several times per call). A hit
 * needs the row's document to equal, byte for byte, the one checked before,
 * so the check below still covers every read; the record handed out is
 * frozen, so sharing it cannot leak a change from one reader to the next.
 */
const decoded = new Lru<string, { document: string; content_digest: string; record: Envelope }>(4096);

/**
 * The revisions each turn in flight stored at its admission, by effect id
 * (the turn's follow-up). The stopper's sweep rebuilds turns in flight from
 * those records (attempt, permission decision, contract chain: 1.3 reads per
 * delegated call at c=32, every one a hit); once the turn's verdict ends its
 * follow-up nothing on the request path reads them again. Forgotten then, they
 * die young: remembered until 4,096 later records pushed them out (about 585
 * calls), they outlived V8's young generation, 23 KB per call at c=1 (issue
 * #24, session 32). Bounded like the records: a turn whose verdict another
 * node commits is forgotten here by age.
 */
const inFlight = new Lru<string, string[]>(1024);

/**
 * Called when this process has just stored `record` as `document`: a later
 * read of that same row (same bytes) may answer with the record itself rather
 * than parse and re-hash what it wrote. Only a frozen record whose canonical
 * text is `document` qualifies; a hit still needs the row's bytes to match.
 * `follows`: the effects whose admission stored it (see {@link forgetFollows}).
 */
export function rememberStored(record: Envelope, document: string, follows: readonly string[] = []): void {
  if (!isCanonicalFrozen(record)) return;
  decoded.set(record.revision_id, { document, content_digest: record.content_digest, record });
  for (const effect of follows) {
    const ids = inFlight.get(effect);
    if (ids) ids.push(record.revision_id);
    else inFlight.set(effect, [record.revision_id]);
  }
}

/** These effects' follow-ups ended (their verdicts): what their admissions stored is decoded from the row if read again. */
export function forgetFollows(effects: readonly string[]): void {
  for (const effect of effects) {
    for (const id of inFlight.get(effect) ?? []) decoded.delete(id);
    inFlight.delete(effect);
  }
}

/**
 * Stored bytes are re-checked on every read, in both adapters: a flipped bit
 * on disk must surface as storage_error, not as a record someone acts on.
 */
export function decodeRecord(row: RecordDocRow): Envelope {
  const hit = decoded.get(row.revision_id);
  if (hit && hit.document === row.document && hit.content_digest === row.content_digest) return hit.record;
  const record = checkRecord(row);
  decoded.set(row.revision_id, { document: row.document, content_digest: row.content_digest, record });
  return record;
}

function checkRecord(row: RecordDocRow): Envelope {
  let doc: Envelope;
  try {
    doc = JSON.parse(row.document) as Envelope;
  } catch (cause) {
    throw storageError('stored record is not valid JSON', { revision_id: row.revision_id }, cause);
  }
  if (computeContentDigest(doc) !== row.content_digest || doc.content_digest !== row.content_digest) {
    throw storageError('stored record does not match its digest', { revision_id: row.revision_id });
  }
  return freezeCanonical(doc);
}
