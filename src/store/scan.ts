/** Bounded scans over current record revisions, shared by every caller that filters them in memory. */
import type { Envelope } from '../records/envelope.ts';
import type { RecordStore } from './port.ts';

/**
 * Current revisions of one schema that `match`, newest first: at most
 * `limit` of them, reading at most `pages` pages of `pageSize`.
 */
export async function currentWhere<T extends Envelope>(
  store: Pick<RecordStore, 'listCurrent'>,
  schemaRef: string,
  match: (record: T) => boolean,
  opts: { limit: number; pages: number; pageSize: number },
): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < opts.pages && out.length < opts.limit; page++) {
    const got = await store.listCurrent(schemaRef, { limit: opts.pageSize, ...(cursor ? { cursor } : {}) });
    for (const r of got.records as T[]) if (out.length < opts.limit && match(r)) out.push(r);
    cursor = got.cursor;
    if (!cursor) break;
  }
  return out;
}
