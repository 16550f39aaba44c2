/**
 * src/store/postgres/statistics.ts without a server: when a process checks,
 * which tables a check asks to analyze, given the sizes the pool reports, and
 * what it remembers.
 */
import { describe, expect, it } from 'vitest';
import { CHECK_EVERY, FIRST_CHECK, GrowthStatistics, MIN_PAGES } from '../../src/store/postgres/statistics.ts';

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

describe('growth statistics: when a process checks', () => {
  it('first after 32 commits, then after gaps that double up to every 500', async () => {
    const p = pool(() => 1);
    const stats = new GrowthStatistics(p.query, ['control_heads']);
    const at: number[] = [];
    for (let commit = 1; commit <= 2_000; commit++) {
      stats.committed();
      await stats.settled();
      if (stats.stats.checks > at.length) at.push(commit);
    }
    expect([FIRST_CHECK, CHECK_EVERY]).toEqual([32, 500]);
    expect(at).toEqual([32, 96, 224, 480, 980, 1480, 1980]);
  });

  it('a gap set below the first one is kept from the start, and 0 never checks by itself', async () => {
    for (const [every, expected] of [[10, [10, 20, 30]], [0, []]] as const) {
      const stats = new GrowthStatistics(pool(() => 1).query, ['control_heads'], every);
      const at: number[] = [];
      for (let commit = 1; commit <= 30; commit++) {
        stats.committed();
        await stats.settled();
        if (stats.stats.checks > at.length) at.push(commit);
      }
      expect(at, `every ${every}`).toEqual(expected);
    }
  });
});
