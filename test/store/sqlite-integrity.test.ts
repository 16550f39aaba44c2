/**
 * ADR-0014: "Unreadable, corrupt or incomplete previously initialized state
 * prevents affected admission; it is not an empty budget." Real files, real
 * worker processes killed with SIGKILL.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/sqlite/database.ts';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { expectCode, expectCodeAsync } from '../helpers/errors.ts';
import { admission, chain, freshSpace, publishAgent } from './support/fixtures.ts';
import { startWorker } from './support/processes.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-integrity-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `i${++n}`, 'baton.db');

/** An initialised store with one chain, closed cleanly (everything checkpointed into the main file). */
async function initialised(path: string) {
  const store = SqliteStore.open(path, { create: true });
  const space = freshSpace();
  await publishAgent(store, space);
  const c = await chain(store, space, { root: 100n });
  await store.close();
  return { space, ids: [c.root, c.child, c.leaf] };
}

/** Five cold process starts one after another (each loads the TypeScript store): a bound for the work, not a speed claim. */
const FIVE_WORKERS_MS = 120_000;

/** Five worker processes each hold a reservation, then all die by SIGKILL: their writes live only in the WAL. */
async function fiveHeldThenKill9(path: string, space: string, ids: string[]): Promise<void> {
  for (let i = 0; i < 5; i++) {
    const w = startWorker(['hold', 'sqlite', path, space, JSON.stringify(ids)]);
    expect(await w.next()).toHaveProperty('reserved');
    w.child.kill('SIGKILL');
    await w.exited;
  }
}

describe('sqlite: previously initialised state is never an empty store', () => {
  it('a store with five held reservations reopens with all five after SIGKILL (the WAL is recovered)', async () => {
    const path = fresh();
    const { space, ids } = await initialised(path);
    await fiveHeldThenKill9(path, space, ids);
    const store = SqliteStore.open(path);
    expect(await store.ledger.unresolved()).toHaveLength(5);
    // Migration 15 dropped the indexes nothing reads.
    expect(store.handle.prepare("SELECT name FROM sqlite_master WHERE name IN ('ledger_nodes_by_ns', 'ledger_nodes_live', 'ledger_reservations_by_ns')").all()).toEqual([]);
    // Migration 10 found the one root, live with its unresolved reservations.
    expect(store.handle.prepare('SELECT root_id, unresolved FROM ledger_live_roots').all()).toEqual([{ root_id: ids[0], unresolved: 1n }]);
    // Migration 16 counted the namespace's five held reservations.
    expect(store.handle.prepare('SELECT owner_namespace, n FROM ledger_unresolved_counts').all()).toEqual([{ owner_namespace: `ns-${space}`, n: 5n }]);
    await store.close();
  }, FIVE_WORKERS_MS);

  it('a WAL lost after SIGKILL is storage_error, not a store with 0 reservations', async () => {
    const path = fresh();
    const { space, ids } = await initialised(path);
    await fiveHeldThenKill9(path, space, ids);
    expect(existsSync(`${path}-wal`)).toBe(true);
    rmSync(`${path}-wal`);
    rmSync(`${path}-shm`, { force: true });
    const err = expectCode(() => SqliteStore.open(path, { create: true }), 'storage_error');
    expect(err.details).toMatchObject({ reason: 'marker_mismatch' });
  }, FIVE_WORKERS_MS);

  it('a database file truncated to 0 bytes is storage_error, even with create', async () => {
    const path = fresh();
    await initialised(path);
    truncateSync(path, 0);
    const err = expectCode(() => SqliteStore.open(path, { create: true }), 'storage_error');
    expect(err.details).toMatchObject({ reason: 'empty' });
  });

  it('a dropped table is storage_error', async () => {
    const path = fresh();
    await initialised(path);
    const raw = new Database(path);
    raw.exec('DROP TABLE ledger_entries');
    raw.close();
    expectCode(() => SqliteStore.open(path, { create: true }), 'storage_error');
  });

  it('another store\'s database file under the marker is storage_error', async () => {
    const a = fresh();
    const b = fresh();
    await initialised(a);
    await initialised(b);
    rmSync(a);
    const raw = new Database(b);
    raw.exec(`VACUUM INTO '${a.replace(/'/g, "''")}'`);
    raw.close();
    const err = expectCode(() => SqliteStore.open(a), 'storage_error');
    expect(err.message).toMatch(/another store/);
  });

  it('creates the data directory 0700 and the database and its marker 0600', async () => {
    const path = fresh();
    await initialised(path);
    expect(statSync(join(path, '..')).mode & 0o777).toBe(0o700);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(`${path}.initialized`).mode & 0o777).toBe(0o600);
    const store = SqliteStore.open(path);
    expect(statSync(`${path}-wal`).mode & 0o777).toBe(0o600);
    await store.close();
  });

  it('opens every connection with the settings the store relies on', () => {
    const db = openDatabase(fresh(), { create: true });
    try {
      const get = (p: string) => db.pragma(p, { simple: true });
      // Durability (WAL, FULL), integrity (foreign keys), purged content zeroed (secure_delete),
      // and statement journals in memory (issue #24: ~270 µs per multi-row statement otherwise).
      // A page cache of 16 MiB, no larger (database.ts PAGE_CACHE_KIB: each COMMIT after a page split walks all of it).
      expect({ journal: get('journal_mode'), sync: get('synchronous'), fk: get('foreign_keys'), secure: get('secure_delete'), temp: get('temp_store'), cache: get('cache_size') })
        .toEqual({ journal: 'wal', sync: 2n, fk: 1n, secure: 1n, temp: 2n, cache: -16_384n });
    } finally {
      db.close();
    }
  });

  it('a store initialised before store ids existed (bare-timestamp marker, schema 4) opens, keeps its rows and gets an id', async () => {
    const path = fresh();
    const { space, ids } = await initialised(path);
    await fiveHeldThenKill9(path, space, ids);
    // Turn it into what the previous build left behind.
    const raw = new Database(path);
    raw.exec(`DROP VIEW record_appends; DROP VIEW control_appends; DROP VIEW ledger_journal; DROP TRIGGER attempt_work_ends_on_resolve;
      DROP TRIGGER ledger_live_root_prune_on_issue; DROP TRIGGER ledger_live_root_on_issue; DROP TRIGGER ledger_live_root_on_reserve; DROP TRIGGER ledger_live_root_on_consume; DROP TRIGGER ledger_live_root_on_resolve;
      DROP TRIGGER ledger_unresolved_on_insert; DROP TRIGGER ledger_unresolved_on_update; DROP TRIGGER ledger_unresolved_on_delete; DROP TABLE ledger_unresolved_counts;
      DROP TRIGGER ledger_preset_window_on_issue; DROP TABLE ledger_preset_windows;
      DROP TABLE ledger_live_roots; DROP TABLE baton_meta; DROP TABLE gateway_identity; DROP TABLE card_history;
      DROP TABLE content; DROP TABLE attempt_work; DROP TABLE preset_locks; DROP INDEX ledger_nodes_by_preset; ALTER TABLE ledger_nodes DROP COLUMN preset_id;
      ALTER TABLE push_configs DROP COLUMN gateway_id; ALTER TABLE push_deliveries DROP COLUMN gateway_id;
      CREATE INDEX ledger_nodes_by_ns ON ledger_nodes(owner_namespace, parent_id); CREATE INDEX ledger_nodes_live ON ledger_nodes(owner_namespace, not_after);
      CREATE INDEX ledger_reservations_by_ns ON ledger_reservations(owner_namespace); CREATE INDEX ledger_reservations_live ON ledger_reservations(owner_namespace, status);
      DELETE FROM schema_migrations WHERE version >= 5`);
    raw.close();
    writeFileSync(`${path}.initialized`, '2026-01-01T00:00:00.000Z\n');
    const store = SqliteStore.open(path);
    expect(await store.ledger.unresolved()).toHaveLength(5);
    // Migration 15 dropped the indexes nothing reads.
    expect(store.handle.prepare("SELECT name FROM sqlite_master WHERE name IN ('ledger_nodes_by_ns', 'ledger_nodes_live', 'ledger_reservations_by_ns')").all()).toEqual([]);
    // Migration 10 found the one root, live with its unresolved reservations.
    expect(store.handle.prepare('SELECT root_id, unresolved FROM ledger_live_roots').all()).toEqual([{ root_id: ids[0], unresolved: 1n }]);
    // Migration 16 counted the namespace's five held reservations.
    expect(store.handle.prepare('SELECT owner_namespace, n FROM ledger_unresolved_counts').all()).toEqual([{ owner_namespace: `ns-${space}`, n: 5n }]);
    await store.close();
    expect(JSON.parse(readFileSync(`${path}.initialized`, 'utf8'))).toMatchObject({ store_id: expect.stringMatching(/^sto_/), schema: MIGRATIONS[MIGRATIONS.length - 1]!.version, created_at: '2026-01-01T00:00:00.000Z' });
  }, FIVE_WORKERS_MS);

  it('a full database (SQLITE_FULL) refuses admissions as storage_error and keeps what it had', async () => {
    const path = fresh();
    const { space, ids } = await initialised(path);
    const store = SqliteStore.open(path);
    const before = (await store.ledger.unresolved()).length;
    // The same answer SQLite gives when the disk is full: no page can be added.
    const pages = Number(store.handle.pragma('page_count', { simple: true }));
    store.handle.pragma(`max_page_count = ${pages}`);
    let refused = 0;
    for (let i = 0; i < 50 && refused === 0; i++) {
      try {
        await store.ledger.admit(await admission(store, space, ids, ids[2]!, { units: 1n }));
      } catch (err) {
        expect((err as { code?: string }).code).toBe('storage_error');
        refused++;
      }
    }
    expect(refused).toBe(1);
    await store.ping(); // still readable
    await expectCodeAsync(store.ledger.admit(await admission(store, space, ids, ids[2]!, { units: 1n })), 'storage_error');
    const held = (await store.ledger.unresolved()).length;
    expect(held).toBeGreaterThanOrEqual(before);
    for (const row of await store.ledger.balanceAudit(ids[0]!)) expect(row).toMatchObject({ consistent: true });
    await store.close();
  });
});
