/**
 * Walks a store's audit scans a page at a time through the verifier, so a
 * store of any size is checked in bounded memory: one page of rows plus the
 * one chain being walked.
 */
import type { AuditReads } from '../store/port.ts';
import { AuditVerifier, type AuditReport, type VerifierOptions } from './verify.ts';
import { ContentAudit, type ContentAuditRow } from './content.ts';

export interface AuditOptions extends VerifierOptions {
  /** Rows per scan page. Default 500. */
  pageSize?: number;
}

/**
 * With `content` (the store's content table), content stored apart from the
 * records is checked too (audit/content.ts): purged by retention is fine,
 * missing or tampered is a break.
 */
export async function auditStore(reads: AuditReads, opts: AuditOptions = {}, content?: { scan(after: string | undefined, limit: number): Promise<ContentAuditRow[]> }): Promise<AuditReport> {
  const size = Math.max(1, Math.trunc(opts.pageSize ?? 500));
  const v = new AuditVerifier(opts);
  const c = new ContentAudit((b) => v.note(b));
  await pages(reads.scanRecords.bind(reads), (r) => ({ record_id: r.record_id, seq: r.seq }), (r) => (v.record(r), c.record(r)), size);
  await pages(reads.scanRecordHeads.bind(reads), (r) => r.record_id, (r) => v.recordHead(r), size);
  await pages(reads.scanEvents.bind(reads), (r) => ({ project_id: r.project_id, branch_id: r.branch_id, position: r.position }), (r) => v.event(r), size);
  await pages(reads.scanControlHeads.bind(reads), (r) => ({ project_id: r.project_id, branch_id: r.branch_id }), (r) => v.controlHead(r), size);
  if (!content) return v.finish();
  await pages((after: string | undefined, limit) => content.scan(after, limit), (r) => r.digest, (r) => c.content(r), size);
  const counts = c.finish();
  return { ...{}, ...v.finish(), ...counts };
}

async function pages<R, C>(scan: (after: C | undefined, limit: number) => Promise<R[]>, cursorOf: (row: R) => C, each: (row: R) => void, size: number) {
  let after: C | undefined;
  for (;;) {
    const rows = await scan(after, size);
    for (const row of rows) each(row);
    // Only an empty page ends a scan: an adapter may cap a page below `size`.
    const last = rows[rows.length - 1];
    if (last === undefined) return;
    after = cursorOf(last);
  }
}
