/** `baton audit verify` over an approval request's content (issue 25 item 16): the message and rendering it names by digest are checked like any content. */
import { describe, expect, it } from 'vitest';
import { ContentAudit } from '../../src/audit/content.ts';
import type { AuditBreak } from '../../src/audit/report.ts';
import { detachedOf } from '../../src/records/detached.ts';
import { schemaRefFor } from '../../src/records/schema-ref.ts';

const params = detachedOf('task_input', { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'pay 42' }] } });
const rendering = detachedOf('task_input', '[0] text: "pay 42"');
const request = { record_id: 'apr_1', schema_ref: schemaRefFor('approval_request'), document: JSON.stringify({ body: { content: 'apart', params_digest: params.digest, rendering_digest: rendering.digest } }) };
const row = (c: { digest: string; document: string }) => ({ digest: c.digest, document: c.document, stored_at: '2026-12-01T00:00:00Z', purged_at: null, purge_ref: null });

describe('audit: approval request content', () => {
  it('a request whose message or rendering row is gone is content_missing; both present (and hashing right) is clean', () => {
    const breaks: AuditBreak[] = [];
    const a = new ContentAudit((b) => breaks.push(b));
    a.record(request);
    a.content(row(params));
    a.finish();
    expect(breaks).toEqual([expect.objectContaining({ kind: 'content_missing', where: { record_id: 'apr_1' } })]);
    const clean: AuditBreak[] = [];
    const b = new ContentAudit((x) => clean.push(x));
    b.record(request);
    b.content(row(params));
    b.content(row(rendering));
    expect(b.finish()).toEqual({ content_checked: 2, content_purged: 0 });
    expect(clean).toEqual([]);
  });
});
