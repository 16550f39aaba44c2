/**
 * The audit scans (`baton audit verify`), shared by both adapters: the SQL is
 * identical but for placeholders, so an adapter supplies only those and a way
 * to run one read. Every scan is keyset-paged on an existing index (records
 * on records_by_record, events on their primary key, heads on theirs), so a
 * page costs the same at the end of a large store as at its start.
 *
 * Rows are returned as stored: no decoding, no re-serialising. Each carries
 * its head's columns from the same statement, which is one snapshot in both
 * engines, so an audit running beside a live gateway never pairs a head with
 * a chain it has not reached yet.
 */
import type { StreamId } from '../control/scope.ts';
import type {
  AuditControlHeadRow,
  AuditEventCursor,
  AuditEventRow,
  AuditReads,
  AuditRecordCursor,
  AuditRecordHeadRow,
  AuditRecordRow,
} from './port.ts';

export interface AuditDialect {
  /** The placeholder of the n-th (1-based) parameter; each appears once, in order. */
  p(n: number): string;
  /** Runs one read, resolving with its rows (integers as BigInt). */
  all<T>(sql: string, params: readonly unknown[]): Promise<T[]>;
}

/** Rows per page: enough to amortise a round trip, few enough that a page of 64 KiB documents stays small. */
export const AUDIT_MAX_PAGE = 10_000;
const clamp = (limit: number) => Math.min(Math.max(Math.trunc(limit) || 1, 1), AUDIT_MAX_PAGE);

export function composeAudit({ p, all }: AuditDialect): AuditReads {
  /** `WHERE (cols) > (params)` when there is a cursor, then the LIMIT placeholder after it. */
  const keyset = (cols: readonly string[], after: readonly unknown[] | undefined) => {
    const where = after ? `WHERE (${cols.join(', ')}) > (${cols.map((_, i) => p(i + 1)).join(', ')})` : '';
    return { where, order: cols.join(', '), limit: p((after?.length ?? 0) + 1), params: after ?? [] };
  };
  const scan = <T>(sql: (k: ReturnType<typeof keyset>) => string, cols: readonly string[], after: readonly unknown[] | undefined, limit: number) => {
    const k = keyset(cols, after);
    return all<T>(sql(k), [...k.params, clamp(limit)]);
  };
  return {
    scanRecords: (after: AuditRecordCursor | undefined, limit: number) =>
      scan<AuditRecordRow>(
        (k) => `SELECT r.seq, r.record_id, r.revision_id, r.content_digest, r.schema_ref, r.prior_revision, r.document,
                  h.revision_id AS head_revision_id
                FROM records r LEFT JOIN record_heads h ON h.record_id = r.record_id
                ${k.where} ORDER BY ${k.order} LIMIT ${k.limit}`,
        ['r.record_id', 'r.seq'],
        after && [after.record_id, after.seq],
        limit,
      ),
    scanEvents: (after: AuditEventCursor | undefined, limit: number) =>
      scan<AuditEventRow>(
        (k) => `SELECT e.project_id, e.branch_id, e.position, e.event_id, e.event_type, e.idempotency_key, e.input_digest, e.event_digest,
                  e.document, h.position AS head_position, h.event_id AS head_event_id, h.event_digest AS head_event_digest,
                  h.state AS head_state, h.scope_kind AS head_scope_kind
                FROM control_events e LEFT JOIN control_heads h ON h.project_id = e.project_id AND h.branch_id = e.branch_id
                ${k.where} ORDER BY ${k.order} LIMIT ${k.limit}`,
        ['e.project_id', 'e.branch_id', 'e.position'],
        after && [after.project_id, after.branch_id, after.position],
        limit,
      ),
    scanRecordHeads: (after: string | undefined, limit: number) =>
      scan<AuditRecordHeadRow>(
        (k) => `SELECT h.record_id, h.revision_id, (SELECT max(r.seq) FROM records r WHERE r.record_id = h.record_id) AS last_seq
                FROM record_heads h ${k.where} ORDER BY ${k.order} LIMIT ${k.limit}`,
        ['h.record_id'],
        after === undefined ? undefined : [after],
        limit,
      ),
    scanControlHeads: (after: StreamId | undefined, limit: number) =>
      scan<AuditControlHeadRow>(
        (k) => `SELECT h.project_id, h.branch_id, h.position, h.event_id, h.event_digest,
                  (SELECT max(e.position) FROM control_events e WHERE e.project_id = h.project_id AND e.branch_id = h.branch_id) AS last_position
                FROM control_heads h ${k.where} ORDER BY ${k.order} LIMIT ${k.limit}`,
        ['h.project_id', 'h.branch_id'],
        after && [after.project_id, after.branch_id],
        limit,
      ),
  };
}
