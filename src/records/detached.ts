/**
 * Content stored apart from the immutable records (issue #17 data retention;
 * RW-003 §9 minimal data, ADR-0014 nothing erased). A record keeps only the
 * digest of a caller's message or a task view; the content itself goes to the
 * store's `content` table, written in the same transaction as the record, and
 * may be purged after the retention period while every digest chain stays
 * valid. Between sealing and storing, the content rides beside the record
 * object here (never inside it: it is not part of the sealed bytes).
 */
import { canonicalText } from './canonical.ts';
import { sha256Digest } from './digest.ts';
import type { JsonValue } from './strict-json.ts';

/** What kind of content: the caller's message (task_input) or Baton's task view of an attempt. */
export type ContentKind = 'task_input' | 'task_view';

export interface DetachedContent {
  digest: string;
  kind: ContentKind;
  /** Canonical JSON text of the content (its digest is `digest`). */
  document: string;
}

const riders = new WeakMap<object, DetachedContent[]>();

/** The content `value` as stored apart, with the digest the record keeps. */
export function detachedOf(kind: ContentKind, value: JsonValue): DetachedContent {
  const document = canonicalText(value); // written once: the digest is of these very bytes
  return { digest: sha256Digest(document), kind, document };
}

/** Attaches content to a sealed record on its way to the store. */
export function ride<T extends object>(record: T, content: readonly DetachedContent[]): T {
  if (content.length > 0) riders.set(record, [...(riders.get(record) ?? []), ...content]);
  return record;
}

/** The content that must be stored with `record` (none for most records). */
export function ridersOf(record: object): readonly DetachedContent[] {
  return riders.get(record) ?? [];
}
