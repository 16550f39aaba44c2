/**
 * The Delegations view's pages (issue 25 item 20) over a real store (SQLite
 * and PostgreSQL):
 * keyset paging that neither repeats nor skips an attempt (also while new
 * attempts arrive), a bounded read per page, and the filters by caller,
 * delegatee, state and time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupAttempts, parseTreeQuery, type TreeQuery } from '../../src/operator/tree-page.ts';
import { sealRecord } from '../../src/records/envelope.ts';
import { sequentialIds } from '../../src/records/ids.ts';
import { schemaRefFor } from '../../src/records/schema-ref.ts';
import { manualClock } from '../../src/records/time.ts';
import type { Store } from '../../src/store/port.ts';
import { expectCode } from '../helpers/errors.ts';

const SCHEMA = schemaRefFor('execution_attempt');
const actor = { object_id: 'actor_baton', revision_id: 'rev_1', content_digest: `sha256:${'a'.repeat(64)}` };
const ref = (id: string) => ({ object_id: id, revision_id: `rev_${id}`, content_digest: `sha256:${'b'.repeat(64)}` });

export function treePageSuite(name: string, open: () => Promise<{ store: Store; close(): Promise<void> }>): void {
  const clock = manualClock('2026-12-01T10:00:00.000Z');
  const deps = { ids: sequentialIds('tp'), clock };
  let store: Store;
  let close: () => Promise<void>;
  /** Every attempt stored, oldest first (one a minute). */
  const written: Array<{ id: string; root: string; caller: string; delegatee: string; state: string; outcome?: string }> = [];

  async function attempt(root: string, caller: string, delegatee: string, state: 'open' | 'closed', outcome?: string): Promise<void> {
    clock.advance(60_000);
    const body = { attempt_id: '', caller_id: caller, delegatee_id: delegatee, state, ...(outcome ? { outcome } : {}), root_ref: ref(root), delegation_ref: ref(`${root}_child`) };
    const rec = sealRecord({ type: 'execution_attempt', body, issuedBy: actor, lifecycle: 'active' }, deps);
    await store.putRecord(rec);
    written.push({ id: rec.record_id, root, caller, delegatee, state, ...(outcome ? { outcome } : {}) });
}

/** Every page from the start: the roots on each and the attempt ids seen. */
async function walk(q: TreeQuery, limit: number, scanMax?: number) {
  const pages: Array<{ roots: string[]; ids: string[]; scanned: number }> = [];
  let cursor: string | undefined;
  do {
    const page = await groupAttempts(store, SCHEMA, { ...q, ...(cursor ? { cursor } : {}) }, limit, scanMax);
    pages.push({ roots: [...page.roots.keys()], ids: [...page.roots.values()].flat().map((a) => a.record_id), scanned: page.scanned });
    cursor = page.next;
    expect(pages.length).toBeLessThan(100);
  } while (cursor);
  return pages;
}

beforeAll(async () => {
  ({ store, close } = await open());
  // Six roots; root r1's two attempts are far apart, so it spans pages.
  await attempt('r1', 'planner', 'billing', 'closed', 'succeeded');
  for (const [i, root] of ['r2', 'r3', 'r4', 'r5', 'r6'].entries()) {
    await attempt(root, i % 2 === 0 ? 'planner' : 'auditor', i % 2 === 0 ? 'billing' : 'search', i === 4 ? 'open' : 'closed', i === 4 ? undefined : i === 1 ? 'failed' : 'succeeded');
  }
  await attempt('r1', 'planner', 'search', 'closed', 'unknown');
});
afterAll(async () => close?.());

describe(`${name}: Delegations pages (keyset)`, () => {
  it('pages through every attempt once, newest first, at most `limit` roots a page', async () => {
    const pages = await walk({}, 2);
    expect(pages.map((p) => p.roots)).toEqual([['r1', 'r6'], ['r5', 'r4'], ['r3', 'r2'], ['r1']]);
    const ids = pages.flatMap((p) => p.ids);
    expect(ids).toEqual(written.map((w) => w.id).reverse());
  });

  it('a page is the same after new attempts arrive: the cursor is a position in the store, not an offset', async () => {
    const first = await groupAttempts(store, SCHEMA, {}, 2);
    const before = await groupAttempts(store, SCHEMA, { cursor: first.next! }, 2);
    await attempt('r7', 'planner', 'billing', 'open');
    await attempt('r8', 'planner', 'billing', 'open');
    const after = await groupAttempts(store, SCHEMA, { cursor: first.next! }, 2);
    expect([...after.roots.keys()]).toEqual([...before.roots.keys()]);
    expect(after.next).toBe(before.next);
  });

  it('reads at most scanMax attempts per page, and says where to go on', async () => {
    const pages = await walk({ caller: 'nobody' }, 20, 3);
    expect(pages.every((p) => p.scanned <= 3 && p.roots.length === 0)).toBe(true);
    expect(pages.reduce((n, p) => n + p.scanned, 0)).toBe(written.length);
  });

  it('filters by caller, delegatee, state or outcome, and time', async () => {
    const rootsOf = async (q: TreeQuery) => (await walk(q, 50)).flatMap((p) => p.roots);
    expect(await rootsOf({ caller: 'auditor' })).toEqual(['r5', 'r3']);
    expect(await rootsOf({ delegatee: 'search' })).toEqual(['r1', 'r5', 'r3']);
    expect(await rootsOf({ state: 'open' })).toEqual(['r8', 'r7', 'r6']);
    expect(await rootsOf({ state: 'failed' })).toEqual(['r3']);
    expect(await rootsOf({ caller: 'planner', delegatee: 'billing', state: 'succeeded' })).toEqual(['r4', 'r2', 'r1']);
    // Minutes 1..7 were the first seven attempts: [10:03, 10:05) holds r3 (10:03) and r4 (10:04).
    expect(await rootsOf(parseTreeQuery({ since: '2026-12-01T10:03Z', until: '2026-12-01T10:05:00Z' }))).toEqual(['r4', 'r3']);
  });
});
}

export function treeQuerySuite(): void {
  describe('the query at the edge', () => {
    it('treats empty form fields as no filter and reads dates as UTC', () => {
      expect(parseTreeQuery({ caller: '', delegatee: '', state: '', since: '2026-12-01', limit: '5' })).toEqual({ since: Date.parse('2026-12-01T00:00:00Z'), limit: 5 });
    });

    it('refuses what it cannot read, naming the field', () => {
      expect(expectCode(() => parseTreeQuery({ since: 'yesterday' }), 'invalid_request').message).toMatch(/^since: /);
      expect(expectCode(() => parseTreeQuery({ limit: '51' }), 'invalid_request').message).toMatch(/^limit: /);
      expect(expectCode(() => parseTreeQuery({ state: 'done' }), 'invalid_request').message).toMatch(/^state: /);
      expect(expectCode(() => parseTreeQuery({ cursor: '12.3' }), 'invalid_request').message).toMatch(/^cursor: /);
    });
  });
}
