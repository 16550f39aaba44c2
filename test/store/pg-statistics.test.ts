/**
 * Planner statistics for a young schema (src/store/postgres/statistics.ts,
 * issue #24): a plan PostgreSQL cached while a table was a few pages long
 * stays in use as the table grows, until an ANALYZE of the table invalidates
 * it. The store analyzes the tables of its schema that have doubled since the
 * planner last recorded their size (its own tables only, in a schema it may
 * share), on its own every so many committed transactions, so the fence read
 * stops scanning control_heads whole.
 */
import { describe, expect, it } from 'vitest';
import { Config } from '../../src/config.ts';
import { openStore } from '../../src/store/open.ts';
import { READS } from '../../src/store/postgres/reads.ts';
import { PgStore } from '../../src/store/postgres/store.ts';
import { CHECK_EVERY, MIN_PAGES } from '../../src/store/postgres/statistics.ts';
import { freshSpace, publishAgent } from './support/fixtures.ts';
import { PG_URL, schemaWithAdmin } from './support/pg.ts';

type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: PlanNode[] };
const nodesOf = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodesOf)];

describe.skipIf(!PG_URL)('postgres: statistics of a young schema', () => {
  const ctx = schemaWithAdmin();

  /** `n` heads more in control_heads, written straight into the table (the planner only sees its size). */
  const grow = (from: number, n: number) =>
    ctx.admin.query(
      `INSERT INTO control_heads(project_id, branch_id, scope_kind, position, event_id, event_digest, state)
       SELECT 'rw-control:grown', 'agent:a' || g, 'agent', 1, 'evt_' || g, 'sha256:x', 'active' FROM generate_series($1::int, $2::int) g`,
      [from, from + n - 1],
    );
  /** What the planner last recorded of control_heads' size (0 before any ANALYZE or VACUUM). */
  const plannedPages = async (table = 'control_heads') =>
    (await ctx.admin.query<{ relpages: number }>('SELECT relpages FROM pg_class WHERE relname = $1 AND relnamespace = current_schema()::regnamespace', [table])).rows[0]!.relpages;
  const scanOfHeads = async () => {
    const { rows } = await ctx.admin.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>("EXPLAIN (FORMAT JSON) EXECUTE fence_read('{rw-control:grown}', '{agent:a7}')");
    return nodesOf(rows[0]!['QUERY PLAN'][0].Plan).find((n) => n['Relation Name'] === 'control_heads');
  };

  it('analyzes a table that outgrew its statistics, so a plan cached while it was small is made again for its size', async () => {
    const store = await PgStore.open(ctx.db.url, { max: 2, analyzeEvery: 0 });
    // Only the store analyzes this table here: autovacuum might, between two lines of the test.
    await ctx.admin.query('ALTER TABLE control_heads SET (autovacuum_enabled = false)');
    try {
      // The fence read, as the store sends it, cached as a generic plan while control_heads is empty (as the store's
      // own named statements are after a few executions).
      const { text } = READS.streamHeads([{ project_id: 'p', branch_id: 'b' }], 'none').statements[0]!;
      await ctx.admin.query('SET plan_cache_mode = force_generic_plan');
      await ctx.admin.query(`PREPARE fence_read(text[], text[]) AS ${text}`);
      expect((await scanOfHeads())?.['Node Type']).toBe('Seq Scan');

      await grow(1, 40_000);
      // Another application's table in the same schema, grown as much: not Baton's to analyze.
      await ctx.admin.query('CREATE TABLE not_batons (x int) WITH (autovacuum_enabled = false); INSERT INTO not_batons SELECT generate_series(1, 100000)');
      // The planner has not recorded the table's size, and nothing invalidated the plan (unless the server reset
      // its caches, which other sessions' DDL can cause: not asserted).
      expect(await plannedPages()).toBe(0);

      const analyzed = await store.statistics.refresh();
      expect(analyzed).toContain('control_heads');
      expect(analyzed).not.toContain('not_batons');
      expect(await plannedPages()).toBeGreaterThan(MIN_PAGES);
      expect(await plannedPages('not_batons')).toBe(0);
      const after = await scanOfHeads();
      expect(after?.['Node Type']).toBe('Index Scan');
      expect(after?.['Index Name']).toBe('control_heads_pkey');

      // Not again until it doubles once more.
      expect(await store.statistics.refresh()).toStrictEqual([]);
      await grow(40_001, 45_000);
      expect(await store.statistics.refresh()).toStrictEqual(['control_heads']);
      expect(store.statistics.stats).toMatchObject({ checks: 3, analyzed: 2, failures: 0 });
    } finally {
      await store.close();
      await ctx.admin.query('DEALLOCATE fence_read');
    }
  });

  it('takes its interval from the configuration (store.analyzeEvery), 500 by default, 0 for off', async () => {
    const opened = async (extra: object) => {
      const store = (await openStore(Config.parse({ store: { kind: 'postgres', url: ctx.db.url, ...extra } }))) as PgStore;
      const every = store.statistics.every;
      await store.close();
      return every;
    };
    expect(CHECK_EVERY).toBe(500);
    expect(await opened({})).toBe(500);
    expect(await opened({ analyzeEvery: 0 })).toBe(0);
    expect(await opened({ analyzeEvery: 40 })).toBe(40);
    expect(Config.safeParse({ store: { kind: 'postgres', url: ctx.db.url, analyzeEvery: -1 } }).success).toBe(false);
    expect(Config.safeParse({ store: { kind: 'postgres', url: ctx.db.url, analyzeEvery: 2.5 } }).success).toBe(false);
  });

  it('checks every so many committed transactions, after the commit, one check at a time', async () => {
    const store = await PgStore.open(ctx.db.url, { max: 2, analyzeEvery: 3 });
    try {
      const space = freshSpace();
      await publishAgent(store, space, 'one');
      await publishAgent(store, space, 'two');
      await store.statistics.settled();
      expect(store.statistics.stats.checks).toBe(0);
      await publishAgent(store, space, 'three');
      await store.statistics.settled();
      expect(store.statistics.stats.checks).toBe(1);
      for (let i = 0; i < 6; i++) await publishAgent(store, space, `more${i}`);
      await store.statistics.settled();
      expect(store.statistics.stats).toMatchObject({ checks: 3, failures: 0 });
    } finally {
      await store.close();
    }
  });
});
