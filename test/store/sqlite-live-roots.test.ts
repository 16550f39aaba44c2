import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { fourUnresolved, liveRootsAgreeWithTheRule, presetRateAcrossMigration24, presetWindowFollowsAnyClock, pruneForgetsExpiredRoots, type CountQuery } from './support/live-roots.ts';

describe('sqlite: live roots', () => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-live-roots-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Counts with named placeholders, run on `store`'s own connection. */
  const countOn =
    (store: SqliteStore): CountQuery =>
    async (sql, values) =>
      Number((store.handle.prepare(sql((name) => `@${name}`)).get(values) as { n: bigint }).n);

  /** A fresh store in `file`, and counts on it (countOn); closed after `fn`. */
  async function onStore(file: string, fn: (store: SqliteStore, count: CountQuery) => Promise<void>): Promise<void> {
    const store = SqliteStore.open(join(dir, file), { create: true });
    try {
      await fn(store, countOn(store));
    } finally {
      await store.close();
    }
  }

  it('capacity counts over the live-root table agree with the rule over every ledger row', () => onStore('ledger.db', (store, count) => liveRootsAgreeWithTheRule(store, count, 60, 'counter')), 120_000);

  it('migrations 16 and 17 count the unresolved reservations a store already holds, the triggers keep counting, and the namespace index goes', async () => {
    const path = join(dir, 'upgrade.db');
    let store = SqliteStore.open(path, { create: true });
    try {
      const { ns, ids, settle, admit } = await fourUnresolved(store);
      const counter = () => (store.handle.prepare('SELECT n FROM ledger_unresolved_counts WHERE owner_namespace = ?').get(ns) as { n: bigint } | undefined)?.n;
      expect(counter()).toBe(4n);
      // The store as schema 15 left it: no counter, no triggers, the namespace index still there (migration 17 drops it).
      store.handle.exec(`DROP VIEW record_appends; DROP VIEW control_appends; DROP VIEW ledger_journal; DROP TRIGGER attempt_work_ends_on_resolve;
        DROP TRIGGER ledger_live_root_prune_on_issue; DROP TRIGGER ledger_unresolved_on_insert; DROP TRIGGER ledger_unresolved_on_update; DROP TRIGGER ledger_unresolved_on_delete;
        DROP TABLE ledger_unresolved_counts; DROP TRIGGER ledger_preset_window_on_issue; DROP TABLE ledger_preset_windows; CREATE INDEX ledger_reservations_live ON ledger_reservations(owner_namespace, status);
        DELETE FROM schema_migrations WHERE version >= 16;`);
      await store.close();
      const marker = `${path}.initialized`;
      writeFileSync(marker, JSON.stringify({ ...JSON.parse(readFileSync(marker, 'utf8')), schema: 15 }));
      store = SqliteStore.open(path);
      expect(counter(), 'filled from the rows').toBe(4n);
      expect(store.handle.prepare("SELECT name FROM sqlite_master WHERE name = 'ledger_reservations_live'").get(), 'dropped by migration 17').toBeUndefined();
      await settle(store, ids[1]!, 'measured');
      await settle(store, ids[2]!, 'measured');
      expect(counter()).toBe(2n);
      await admit(store);
      expect(counter()).toBe(3n);
    } finally {
      await store.close();
    }
  });

  it('opening a root forgets never-reserved roots that expired a margin before it', () => onStore('prune.db', pruneForgetsExpiredRoots));

  it('a preset\'s issuance count is exact through a clock that goes back, and its window never moves back', () => onStore('window.db', presetWindowFollowsAnyClock));

  it('migration 24 on a store whose preset already issued this minute: the rate counts those roots, exactly', async () => {
    const path = join(dir, 'window-upgrade.db');
    let store = SqliteStore.open(path, { create: true });
    try {
      // The count follows the store the downgrade reopens.
      await presetRateAcrossMigration24(store, (sql, values) => countOn(store)(sql, values), async () => {
        store.handle.exec('DROP TRIGGER ledger_preset_window_on_issue; DROP TABLE ledger_preset_windows; DELETE FROM schema_migrations WHERE version >= 24;');
        await store.close();
        const marker = `${path}.initialized`;
        writeFileSync(marker, JSON.stringify({ ...JSON.parse(readFileSync(marker, 'utf8')), schema: 23 }));
        return (store = SqliteStore.open(path));
      });
    } finally {
      await store.close();
    }
  });
});
