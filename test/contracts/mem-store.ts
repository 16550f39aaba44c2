/** A tiny Map-based RecordStore for unit tests of the pure contract rules. */
import { invalidRequest } from '../../src/errors.ts';
import type { Envelope } from '../../src/records/envelope.ts';
import type { PutResult, RecordStore } from '../../src/store/port.ts';

export class MemStore implements RecordStore {
  private readonly revisions = new Map<string, Envelope[]>();

  async putRecord(record: Envelope): Promise<PutResult> {
    const list = this.revisions.get(record.record_id) ?? [];
    const same = list.find((r) => r.revision_id === record.revision_id);
    if (same) {
      if (same.content_digest !== record.content_digest) throw invalidRequest('revision id reused');
      return 'exists';
    }
    const head = list[list.length - 1];
    if (head && record.prior_revision_ref?.revision_id !== head.revision_id) throw invalidRequest('prior is not the head');
    list.push(structuredClone(record));
    this.revisions.set(record.record_id, list);
    return 'inserted';
  }

  async getRecord(recordId: string, revisionId?: string): Promise<Envelope | undefined> {
    const list = this.revisions.get(recordId) ?? [];
    const hit = revisionId === undefined ? list[list.length - 1] : list.find((r) => r.revision_id === revisionId);
    return hit ? structuredClone(hit) : undefined;
  }

  async getByDigest(digest: string): Promise<Envelope | undefined> {
    for (const list of this.revisions.values()) for (const r of list) if (r.content_digest === digest) return structuredClone(r);
    return undefined;
  }

  async listRevisions(recordId: string): Promise<Envelope[]> {
    return structuredClone(this.revisions.get(recordId) ?? []);
  }
}
