/** Reads of the append-only record table; writes go through the shared program. */
import type { Envelope } from '../../records/envelope.ts';
import { decodeRecord, type RecordDocRow } from '../../records/decode.ts';
import type { Db } from './database.ts';

type Row = RecordDocRow;

export function recordReads(db: Db) {
  const byRevision = db.prepare<[string], Row>('SELECT * FROM records WHERE revision_id = ?');
  const latest = db.prepare<[string], Row>('SELECT r.* FROM record_heads h JOIN records r ON r.revision_id = h.revision_id WHERE h.record_id = ?');
  const revisions = db.prepare<[string], Row>('SELECT * FROM records WHERE record_id = ? ORDER BY seq');
  const current = db.prepare<[string, bigint, number], Row & { seq: bigint }>(
    'SELECT r.* FROM record_heads h JOIN records r ON r.revision_id = h.revision_id WHERE r.schema_ref = ? AND r.seq < ? ORDER BY r.seq DESC LIMIT ?',
  );
  return {
    get(recordId: string, revisionId?: string): Envelope | undefined {
      const row = revisionId === undefined ? latest.get(recordId) : byRevision.get(revisionId);
      return row && row.record_id === recordId ? decodeRecord(row) : undefined;
    },
    revisions: (recordId: string) => revisions.all(recordId).map(decodeRecord),
    current: (schemaRef: string, limit: number, cursor?: string) => {
      const rows = current.all(schemaRef, cursor === undefined ? 1n << 62n : BigInt(cursor), limit);
      const last = rows[rows.length - 1];
      return { records: rows.map(decodeRecord), ...(rows.length === limit && last ? { cursor: String(last.seq) } : {}) };
    },
  };
}

