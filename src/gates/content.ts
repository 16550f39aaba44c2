/**
 * An approval request's message content, kept apart from its records
 * (issue 25 item 16; RW-003 §9 minimal data; records/detached.ts). The
 * request record names the params to forward and the preview's rendering
 * by digest only; both go to the store's content table in the record's own
 * transaction, so retention can purge them while every request and
 * decision revision — and the preview digest an approval bound — stays
 * valid. Read back, the request is whole again until a purge; after it,
 * the message is gone for good and an approval can admit nothing.
 */
import { detachedOf, type DetachedContent } from '../records/detached.ts';
import type { JsonValue } from '../records/strict-json.ts';
import type { ContentStore } from '../store/content-sql.ts';
import type { ApprovalRequestBody } from './records.ts';

/** Where a request record's content went: `apart`, or `purged` once retention took it. */
export const PURGED_RENDERING = '(purged by retention: the message is no longer held)';

/** The body as sealed (digests only) and the content riding beside it. */
export function detachBody(body: ApprovalRequestBody): { body: ApprovalRequestBody; content: DetachedContent[] } {
  // A later revision (or one read back after a purge) re-names the same digests.
  if (body.content === 'apart' || body.content === 'purged') return { body: { ...{}, ...stripped(body), content: 'apart' }, content: [] };
  const params = detachedOf('task_input', body.params as JsonValue);
  const rendering = detachedOf('task_input', body.preview.rendering as string);
  return { body: { ...{}, ...stripped(body), params_digest: params.digest, rendering_digest: rendering.digest, content: 'apart' }, content: [params, rendering] };
}

/** The body without the content itself. */
function stripped(body: ApprovalRequestBody): ApprovalRequestBody {
  const { params: _p, ...rest } = body;
  const { rendering: _r, ...preview } = body.preview;
  return { ...{}, ...rest, preview } as ApprovalRequestBody;
}

/** The body made whole from the content store; a purged message reads as an empty one. */
export async function hydrateBody(body: { [key: string]: unknown }, content: Pick<ContentStore, 'get'>): Promise<{ [key: string]: unknown }> {
  if (body.content !== 'apart') return body;
  const preview = body.preview as { [key: string]: unknown };
  const [params, rendering] = await Promise.all([content.get(String(body.params_digest)), content.get(String(body.rendering_digest))]);
  if (!params?.document || !rendering?.document) {
    // Nothing of the message is left: an empty one (its digest no longer matches, so no approval admits it).
    return { ...{}, ...body, content: 'purged', params: { message: { messageId: `${String(body.task_id)}-purged`, role: 'ROLE_USER', parts: [] } }, preview: { ...{}, ...preview, rendering: PURGED_RENDERING } };
  }
  return { ...{}, ...body, params: JSON.parse(params.document) as unknown, preview: { ...{}, ...preview, rendering: JSON.parse(rendering.document) as unknown } };
}
