/**
 * Every statement the SQLite store runs against ledger_reservations finds its
 * rows through an index, never a walk of the table: that table holds every
 * reservation ever made (settled history is kept, ADR-0014), so a scan would
 * grow each admission with the gateway's age (issue #15, flat growth). It
 * also guards migration 17, which dropped the namespace index SQLite no
 * longer reads (src/store/unresolved-sql.ts DROP_NAMESPACE_INDEX_SQLITE), and any
 * later index change: dropping ledger_unresolved, for one, fails it. The
 * same statements may not scan ledger_nodes either (every root ever issued):
 * a preset's issuance count walks only its window's gap on ledger_nodes_by_preset
 * (capacity.ts presetIssuedSinceSql, migration 24).
 *
 * The statements are the ones the store actually runs, recorded from the
 * driver while a workload admits, settles, issues preset roots, lists
 * unresolved reservations and reads the gauges; each is then explained with
 * the arguments it ran with.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { admission, chain, freshSpace, presetTask, publishAgent } from './support/fixtures.ts';

type Run = { sql: string; args: unknown[] };

/** Records each statement that names `table`, with its first arguments, while `fn` runs (this worker's better-sqlite3 only). */
async function recording(table: string, fn: () => Promise<void>): Promise<Run[]> {
  const proto = Object.getPrototypeOf(new Database(':memory:').prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
  const originals = new Map<string, (...a: unknown[]) => unknown>();
  const runs = new Map<string, Run>();
  for (const m of ['run', 'get', 'all', 'iterate']) {
    const orig = proto[m]!;
    originals.set(m, orig);
    proto[m] = function (this: { source: string }, ...args: unknown[]) {
      if (this.source.includes(table) && !runs.has(this.source)) runs.set(this.source, { sql: this.source, args });
      return orig.apply(this, args);
    };
  }
  try {
    await fn();
  } finally {
    for (const [m, orig] of originals) proto[m] = orig;
  }
  return [...runs.values()];
}

describe('sqlite: query plans over ledger_reservations', () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-plans-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('no statement the store runs scans the table', async () => {
    const store = SqliteStore.open(join(dir, 'plans.db'), { create: true });
    try {
      const space = freshSpace();
      const evidence = { object_id: 'vr_1', revision_id: 'rev_1', content_digest: `sha256:${'b'.repeat(64)}` };
      const runs = await recording('ledger_reservations', async () => {
        await publishAgent(store, space);
        const c = await chain(store, space, { root: 100n });
        const held: string[] = [];
        for (let i = 0; i < 3; i++) {
          const req = await admission(store, space, [c.root, c.child, c.leaf], c.leaf);
          await store.ledger.admit(req);
          held.push(req.reservation_id);
        }
        await store.ledger.admit(await admission(store, space, [c.root, c.child, c.leaf], c.leaf, { units: 1n }, 'consume'));
        await store.ledger.settle({ reservation_id: held[0]!, outcome: { kind: 'measured', actual: new Map([['units', 1n]]) }, evidence, at: new Date().toISOString() });
        await store.ledger.settle({ reservation_id: held[1]!, outcome: { kind: 'unknown' }, evidence, at: new Date().toISOString() });
        const preset = { preset_id: 'plans', max_active_roots: 10, max_per_minute: 100 };
        await presetTask(store, space, preset).run();
        await presetTask(store, space, preset).run();
        await store.ledger.unresolved(10);
        await store.ledger.reservation(held[2]!);
        await store.gauges.snapshot(['plans'], new Date().toISOString());
      });
      // The workload reached the statements this test is about: admission, settlement, issuance, listing, gauges.
      expect(runs.length).toBeGreaterThanOrEqual(6);
      const scans: string[] = [];
      for (const { sql, args } of runs) {
        // A trigger's body is not in the plan of the statement that fires it; the live-root triggers reach reservations by root.
        const plan = store.handle.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>;
        for (const { detail } of plan) if (/^SCAN (ledger_reservations|r|ledger_nodes|n|ledger_preset_windows|w)\b(?! USING)/.test(detail)) scans.push(`${detail} ← ${sql.replace(/\s+/g, ' ').slice(0, 160)}`);
      }
      expect(scans).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('the retained count reads live roots\' unexpired nodes off ledger_nodes_by_root alone (migration 28)', async () => {
    const store = SqliteStore.open(join(dir, 'retained.db'), { create: true });
    try {
      const space = freshSpace();
      const runs = await recording('JOIN ledger_nodes n ON n.root_id', async () => {
        await publishAgent(store, space);
        const c = await chain(store, space, { root: 100n });
        await store.ledger.admit(await admission(store, space, [c.root, c.child, c.leaf], c.leaf));
      });
      expect(runs.length).toBeGreaterThanOrEqual(1);
      for (const { sql, args } of runs) {
        const plan = (store.handle.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>).map((r) => r.detail);
        // Without not_after in the index, each node's table row was read for its expiry: 0.73 ms an admission at 10,000 nodes.
        expect(plan).toContain('SEARCH n USING COVERING INDEX ledger_nodes_by_root (root_id=? AND not_after>?)');
      }
    } finally {
      await store.close();
    }
  });
});
