/**
 * Walks a store's audit scans a page at a time through the verifier, so a
 * store of any size is checked in bounded memory: one page of rows plus the
 * one chain being walked.
 */
import type { AuditReads } from '../store/port.ts';
import { AuditVerifier, type AuditReport, type VerifierOptions } from './verify.ts';

export interface AuditOptions extends VerifierOptions {
  /** Rows per scan page. Default 500. */
  pageSize?: number;
}

export async function auditStore(reads: AuditReads, opts: AuditOptions = {}): Promise<AuditReport> {
  const size = Math.max(1, Math.trunc(opts.pageSize ?? 500));
  const v = new AuditVerifier(opts);
  await pages(reads.scanRecords.bind(reads), (r) => ({ record_id: r.record_id, seq: r.seq }), (r) => v.record(r), size);
  await pages(reads.scanRecordHeads.bind(reads), (r) => r.record_id, (r) => v.recordHead(r), size);
  await pages(reads.scanEvents.bind(reads), (r) => ({ project_id: r.project_id, branch_id: r.branch_id, position: r.position }), (r) => v.event(r), size);
  await pages(reads.scanControlHeads.bind(reads), (r) => ({ project_id: r.project_id, branch_id: r.branch_id }), (r) => v.controlHead(r), size);
  return v.finish();
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
