/**
 * `baton audit verify` for content stored apart from the records (issue #17
 * data retention): every digest a record names must have its content row;
 * a row with a document must hash to its digest (else tampered); a row
 * without one must have been purged by a recorded retention purge whose
 * cut-off is after the content was stored (else its absence is unaccounted
 * for). Pure: rows in, breaks out.
 */
import { digestOf } from '../records/digest.ts';
import { parseStrictJson } from '../records/strict-json.ts';
import type { AuditBreak } from './report.ts';

export interface ContentAuditRow {
  digest: string;
  document: string | null;
  stored_at: string;
  purged_at: string | null;
  purge_ref: string | null;
}

export interface ContentCounts {
  content_checked: number;
  content_purged: number;
}

export class ContentAudit {
  private readonly referenced = new Map<string, string>(); // digest → a record naming it
  private readonly purges = new Map<string, string>(); // retention_purge record id → its cut-off
  private checked = 0;
  private purged = 0;

  constructor(private readonly add: (b: AuditBreak) => void) {}

  /** Each record revision as stored: notes the content digests it names, and retention purges. */
  record(row: { record_id: string; schema_ref: string; document: string }): void {
    const type = row.schema_ref.slice(row.schema_ref.indexOf('#') + 1);
    if (type !== 'task_input' && type !== 'execution_attempt' && type !== 'retention_purge' && type !== 'approval_request') return;
    let body: Record<string, unknown>;
    try {
      body = (parseStrictJson(row.document, { maxBytes: 64 * 1024 * 1024, maxDepth: 256 }) as { body: Record<string, unknown> }).body ?? {};
    } catch {
      return; // the record audit reports an unreadable document
    }
    if (type === 'task_input' && body.content === 'apart' && typeof body.message_digest === 'string') this.referenced.set(body.message_digest, row.record_id);
    if (type === 'execution_attempt' && typeof body.view_digest === 'string') this.referenced.set(body.view_digest, row.record_id);
    // A held request's message and preview rendering (src/gates/content.ts).
    if (type === 'approval_request' && body.content === 'apart') for (const d of [body.params_digest, body.rendering_digest]) if (typeof d === 'string') this.referenced.set(d, row.record_id);
    if (type === 'retention_purge' && typeof body.before === 'string') this.purges.set(row.record_id, body.before);
  }

  /** Each content row (after every record was seen). */
  content(row: ContentAuditRow): void {
    this.checked++;
    this.referenced.delete(row.digest);
    const where = { record_id: row.digest };
    if (row.document !== null) {
      let recomputed: string | undefined;
      try {
        recomputed = digestOf(parseStrictJson(row.document, { maxBytes: 64 * 1024 * 1024, maxDepth: 256 }));
      } catch {
        recomputed = undefined;
      }
      if (recomputed !== row.digest) this.add({ kind: 'content_tampered', where, detail: `content does not hash to its digest (recomputed ${recomputed ?? '(unreadable)'})` });
      return;
    }
    const cutoff = row.purge_ref === null ? undefined : this.purges.get(row.purge_ref);
    if (cutoff === undefined || row.purged_at === null) {
      this.add({ kind: 'content_purge_unaccounted', where, detail: `content is gone but no retention purge record accounts for it (purge_ref ${row.purge_ref ?? 'none'})` });
    } else if (!(row.stored_at < cutoff)) {
      this.add({ kind: 'content_purge_unaccounted', where, detail: `purged by ${row.purge_ref} whose cut-off ${cutoff} is not after it was stored (${row.stored_at})` });
    } else {
      this.purged++;
    }
  }

  finish(): ContentCounts {
    for (const [digest, record] of this.referenced) this.add({ kind: 'content_missing', where: { record_id: record }, detail: `names content ${digest}, which is not in the content store` });
    this.referenced.clear();
    return { content_checked: this.checked, content_purged: this.purged };
  }
}
