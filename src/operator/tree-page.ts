/**
 * One page of delegation trees, found through the attempts admitted under
 * them (issue 25 item 20): filtered by caller, delegatee, state and time,
 * newest first, with a keyset cursor and bounded work per page. The cursor
 * is the store's own keyset cursor over attempt records (newest first by
 * store sequence, so new attempts never shift a page); each request reads at
 * most SCAN_MAX attempt records and says where to go on, so no page costs
 * more than that at any volume.
 */
import { z } from 'zod';
import type { AttemptBody } from '../attempts/record.ts';
import { Outcome } from '../control/event.ts';
import { invalidRequest } from '../errors.ts';
import type { Envelope, SealedRecord } from '../records/envelope.ts';
import type { RecordStore } from '../store/port.ts';

type Attempt = SealedRecord<AttemptBody>;

/** Roots on one page, at most. */
export const TREE_PAGE_MAX = 50;
/** Attempt records per store read. */
const SCAN_PAGE = 200;
/** Attempt records read per request, at most. */
export const SCAN_MAX = 5000;

const STATES = ['dispatching', 'open', 'closed', ...Outcome.options] as const;
// A date, or a date and time; without a zone it is UTC.
const Instant = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/, 'a date or date-time (ISO 8601, UTC unless a zone is given)')
  .transform((s) => Date.parse(/T.*(Z|[+-]\d{2}:\d{2})$/.test(s) ? s : s.includes('T') ? `${s}Z` : `${s}T00:00:00Z`))
  .refine((t) => Number.isFinite(t), 'not a valid date');
const Text = z.string().min(1).max(128);
// An HTML form sends every field, empty or not: an empty field is no filter.
const optional = <T extends z.ZodType>(t: T) => z.preprocess((v) => (v === '' ? undefined : v), t.optional());

/** The filter as it arrives from a query string (zod at the edge). */
export const TreeQuery = z.object({
  caller: optional(Text),
  delegatee: optional(Text),
  /** An attempt state (dispatching, open, closed) or an outcome (succeeded, failed…). */
  state: optional(z.enum(STATES)),
  /** Last activity (the attempt's current revision) at or after / before this instant. */
  since: optional(Instant),
  until: optional(Instant),
  limit: optional(z.coerce.number().int().min(1).max(TREE_PAGE_MAX)),
  cursor: optional(z.string().regex(/^\d{1,19}$/, 'not a page cursor')),
});
export type TreeQuery = z.infer<typeof TreeQuery>;
export const TREE_STATES = STATES;

/** Parses a query string's fields; invalid_request naming the field otherwise. */
export function parseTreeQuery(raw: unknown): TreeQuery {
  const r = TreeQuery.safeParse(raw);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  throw invalidRequest(`${issue.path.join('.') || 'query'}: ${issue.message}`);
}

export function matches(q: TreeQuery, a: Attempt): boolean {
  const b = a.body;
  if (q.caller !== undefined && b.caller_id !== q.caller) return false;
  if (q.delegatee !== undefined && b.delegatee_id !== q.delegatee) return false;
  if (q.state !== undefined && b.state !== q.state && b.outcome !== q.state) return false;
  const at = Date.parse(a.issued_at);
  return !((q.since !== undefined && at < q.since) || (q.until !== undefined && at >= q.until));
}

export interface AttemptGroups {
  /** Matching attempts by root, in the order the roots were first met (newest first). */
  roots: Map<string, Attempt[]>;
  /** Where the next page starts; absent on the last page. */
  next?: string;
  /** Attempt records read for this page. */
  scanned: number;
}

/** Reads attempts from `cursor` on until `limit` roots are complete, the records end, or `scanMax` were read. */
export async function groupAttempts(store: Pick<RecordStore, 'listCurrent'>, schemaRef: string, q: TreeQuery, limit: number, scanMax = SCAN_MAX): Promise<AttemptGroups> {
  let page = q.cursor;
  const roots = new Map<string, Attempt[]>();
  let scanned = 0;
  // The store's cursor for the position just before record `i` of the page read from `page` (keyset, not an offset).
  const before = async (i: number) => (i === 0 ? page : (await store.listCurrent(schemaRef, { limit: i, ...(page ? { cursor: page } : {}) })).cursor);
  for (;;) {
    const got = await store.listCurrent(schemaRef, { limit: SCAN_PAGE, ...(page ? { cursor: page } : {}) });
    const records = got.records as Array<Attempt & Envelope>;
    for (const [i, a] of records.entries()) {
      const root = a.body.root_ref.object_id;
      if (matches(q, a)) {
        // The first attempt of one root too many starts the next page.
        if (!roots.has(root) && roots.size >= limit) return { roots, ...cursorOf(await before(i)), scanned };
        roots.set(root, [...(roots.get(root) ?? []), a]);
      }
      if (++scanned >= scanMax) return { roots, ...cursorOf(i + 1 < records.length ? await before(i + 1) : got.cursor), scanned };
    }
    if (!got.cursor) return { roots, scanned };
    page = got.cursor;
  }
}

const cursorOf = (c: string | undefined): { next?: string } => (c ? { next: c } : {});
