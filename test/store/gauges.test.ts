/**
 * The metrics gauges' store reads (src/store/gauges-sql.ts), one contract
 * for both adapters: the same SQL text runs on SQLite and PostgreSQL and
 * reports what a preset's task holds — an active root, its budget and the
 * held reservation with its age — and nothing for an unknown preset.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PgStore } from '../../src/store/postgres/store.ts';
import type { Store } from '../../src/store/port.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { freshSpace, presetTask, publishAgent } from './support/fixtures.ts';
import { freshSchema, PG_URL } from './support/pg.ts';

function gaugesContract(name: string, open: () => Promise<Store>) {
  describe(`${name} gauges`, () => {
    it('is empty on a fresh store', async () => {
      const store = await open();
      const snap = await store.gauges.snapshot(['p1'], new Date().toISOString());
      expect(snap).toEqual({ reservations: [], activeRoots: [{ preset: 'p1', count: 0 }], budgets: [], outbox: [] });
    });

    it('reports the active root, budget and held reservation of a preset task', async () => {
      const store = await open();
      const space = freshSpace();
      await publishAgent(store, space);
      const preset = { preset_id: `p-${space}`, max_active_roots: 5, max_per_minute: 100 };
      await presetTask(store, space, preset, { units: 7n }).run();
      const snap = await store.gauges.snapshot([preset.preset_id, 'other-preset'], new Date(Date.now() + 1000).toISOString());
      expect(snap.activeRoots).toEqual([{ preset: preset.preset_id, count: 1 }, { preset: 'other-preset', count: 0 }]);
      expect(snap.budgets).toEqual([{ preset: preset.preset_id, dimension: 'units', ceiling: 7, consumed: 0, reserved: 1 }]);
      const held = snap.reservations.find((r) => r.status === 'held')!;
      expect(held.count).toBeGreaterThanOrEqual(1);
      expect(Date.parse(held.oldest!)).toBeLessThanOrEqual(Date.now());
    });
  });
}

const cleanup: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanup) await c();
});

gaugesContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wt17a-gauges-'));
  const store = SqliteStore.open(join(dir, 'baton.db'), { create: true });
  cleanup.push(async () => (await store.close(), rmSync(dir, { recursive: true, force: true })));
  return store;
});

describe.skipIf(!PG_URL)('postgres', () => {
  gaugesContract('postgres', async () => {
    const db = await freshSchema();
    const store = await PgStore.open(db.url, { max: 2 });
    cleanup.push(async () => (await store.close(), await db.drop()));
    return store;
  });
});
