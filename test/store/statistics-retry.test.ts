/**
 * src/store/postgres/statistics.ts without a server: which tables a check
 * asks to analyze, given the sizes the pool reports, and what it remembers.
 */
import { describe, expect, it } from 'vitest';
import { GrowthStatistics, MIN_PAGES } from '../../src/store/postgres/statistics.ts';

/** A pool that reports `pages` for control_heads (never analyzed) and records every ANALYZE; the first `failing` of them fail. */
function pool(pages: () => number, failing = 0) {
  const analyzed: string[] = [];
  let failures = failing;
  const query = async (sql: string): Promise<unknown[]> => {
    if (sql.startsWith('ANALYZE')) {
      if (failures-- > 0) throw Object.assign(new Error('canceling statement due to user request'), { code: '57014' });
      analyzed.push(sql);
      return [];
    }
    return [{ name: 'control_heads', planned: 0, pages: pages() }];
  };
  return { query, analyzed };
}

describe('growth statistics: what a check asks for', () => {
  it('an ANALYZE that failed is asked again at the next check, not only once the table doubles again', async () => {
    const p = pool(() => 4 * MIN_PAGES, 1);
    const stats = new GrowthStatistics(p.query, ['control_heads'], 0);
    await expect(stats.refresh()).rejects.toMatchObject({ code: '57014' });
    await expect(stats.refresh()).resolves.toEqual(['control_heads']);
    expect(p.analyzed).toEqual(['ANALYZE (SKIP_LOCKED) "control_heads"']);
    // Done: not again until it doubles from there.
    await expect(stats.refresh()).resolves.toEqual([]);
  });

  it('a table that doubled since its last ANALYZE is asked again; one that grew less is not', async () => {
    let pages = 2 * MIN_PAGES;
    const p = pool(() => pages);
    const stats = new GrowthStatistics(p.query, ['control_heads'], 0);
    await expect(stats.refresh()).resolves.toEqual(['control_heads']);
    pages = 4 * MIN_PAGES - 1;
    await expect(stats.refresh()).resolves.toEqual([]);
    pages = 4 * MIN_PAGES;
    await expect(stats.refresh()).resolves.toEqual(['control_heads']);
    expect(p.analyzed).toHaveLength(2);
  });
});
