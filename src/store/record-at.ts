/** Reading a record by the exact RevisionRef that names it (RW-003 §2). */
import type { Envelope } from '../records/envelope.ts';
import type { RevisionRef } from '../records/revision-ref.ts';
import type { RecordStore } from './port.ts';

/**
 * The revision `ref` names, read by its revision id (records keep no index on
 * their content digest, migration 21); undefined unless the stored revision
 * matches all three parts of the ref.
 */
export async function recordAt(store: Pick<RecordStore, 'getRecord'>, ref: RevisionRef): Promise<Envelope | undefined> {
  const record = await store.getRecord(ref.object_id, ref.revision_id);
  return record?.content_digest === ref.content_digest ? record : undefined;
}
