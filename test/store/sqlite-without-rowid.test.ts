/**
 * SQLite migration 22 (src/store/sqlite/without-rowid.ts): the request path's
 * small keyed tables are rebuilt WITHOUT ROWID, one B-tree each instead of
 * two. A store schema 21 left must come out with every row, index, trigger
 * and constraint, and every write that moves those rows must still move them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONTROL_APPEND_COLS, RECORD_APPEND_COLS } from '../../src/store/sqlite/appends.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { WITHOUT_ROWID_TABLES } from '../../src/store/sqlite/without-rowid.ts';
import { databaseAtSchema } from './support/older-schema.ts';

const AT = '2026-12-01T10:00:00.000Z';
const insert = (db: Database.Database, into: string, cols: readonly string[]) =>
  db.prepare(`INSERT INTO ${into}(${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'baton-rowless-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A database as a build at schema 21 left it, with rows in every table migration 22 rebuilds. */
function schema21(path: string): void {
  const db = databaseAtSchema(path, 21);
  db.transaction(() => {
    const record = insert(db, 'record_appends', RECORD_APPEND_COLS);
    record.run('grant_a', 'rev_a1', 'sha256:a1', 'schema:grant', null, '{"n":1}', AT, null);
    record.run('grant_a', 'rev_a2', 'sha256:a2', 'schema:grant', 'rev_a1', '{"n":2}', AT, 'sha256:a1');
    record.run('grant_b', 'rev_b1', 'sha256:b1', 'schema:grant', null, '{"n":3}', AT, null);
    const event = insert(db, 'control_appends', CONTROL_APPEND_COLS);
    event.run('prj_1', 'main', 1, 'evt_1', 'rw003.delegation.issued', 'idem_1', 'sha256:i1', 'sha256:e1', '{}', 'delegation', 'active');
    event.run('prj_1', 'main', 2, 'evt_2', 'rw003.delegation.revoked', null, 'sha256:i2', 'sha256:e2', '{}', 'delegation', 'revoked');
    // A root node: its trigger opens the live-root row.
    insert(db, 'ledger_nodes', ['node_id', 'parent_id', 'root_id', 'depth', 'space_id', 'owner_namespace', 'not_after', 'request_digest', 'issued_event', 'created_at', 'preset_id']).run(
      'dlg_root', null, 'dlg_root', 0, 'spc_1', 'ns_1', '2026-12-01T11:00:00.000Z', 'sha256:r', 'evt_1', AT, 'preset_1',
    );
    const balance = insert(db, 'ledger_balances', ['node_id', 'dimension', 'unit', 'ceiling', 'consumed', 'reserved']);
    balance.run('dlg_root', 'invocations', 'count', 10, 2, 1);
    balance.run('dlg_root', 'tokens', 'token', 1000, 0, 0);
    const work = insert(db, 'attempt_work', ['effect_id', 'attempt_id', 'reservation_id', 'lease_owner', 'lease_until', 'tries', 'deadline', 'created_at', 'remote_task_id', 'gateway_id']);
    work.run('eff_1', 'att_1', 'res_1', 'gw_1', AT, 0, AT, AT, 'task_remote', 'gw_1');
    work.run('eff_2', 'att_2', 'res_2', null, AT, 1, AT, AT, null, null);
  })();
  db.close();
}

const tableSql = (db: Database.Database, name: string) => (db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) as { sql: string }).sql;
/** The table's rows in key order, and the definitions of its indexes and triggers. */
const contents = (db: Database.Database, table: string) => ({
  rows: db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2`).all(),
  dependents: db.prepare("SELECT type, name, sql FROM sqlite_master WHERE tbl_name = ? AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY name").all(table),
});

describe('SQLite migration 22: the small keyed tables WITHOUT ROWID', () => {
  it('rebuilds each table keyed by its primary key, keeping every row, index and trigger', async () => {
    const path = join(dir, 'baton.db');
    schema21(path);
    const before = new Database(path).defaultSafeIntegers(true);
    const was = Object.fromEntries(WITHOUT_ROWID_TABLES.map((t) => [t, contents(before, t)]));
    for (const t of WITHOUT_ROWID_TABLES) expect(tableSql(before, t), `${t} at schema 21`).not.toMatch(/WITHOUT ROWID/);
    expect(was.ledger_live_roots!.rows, 'the root trigger opened its live row').toHaveLength(1);
    before.close();

    const store = SqliteStore.open(path);
    try {
      const db = store.handle;
      expect(db.prepare('SELECT version AS v FROM schema_migrations WHERE version = 22').get()).toEqual({ v: 22n });
      for (const t of WITHOUT_ROWID_TABLES) {
        expect(tableSql(db, t), t).toMatch(/\) STRICT, WITHOUT ROWID$/);
        expect(contents(db, t), t).toEqual(was[t]);
      }
      expect(db.pragma('foreign_key_check')).toEqual([]);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.pragma('secure_delete', { simple: true }), 'off only while the copy ran').toBe(1n);
      expect(db.pragma('legacy_alter_table', { simple: true }), 'back off after the renames').toBe(0n);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name LIKE '%_next'").all(), 'no scratch table left').toEqual([]);

      // The writes that move these rows still move them: the append views' upserts, the ledger's charge, the constraints.
      insert(db, 'record_appends', RECORD_APPEND_COLS).run('grant_a', 'rev_a3', 'sha256:a3', 'schema:grant', 'rev_a2', '{"n":4}', AT, 'sha256:a2');
      expect(db.prepare("SELECT revision_id FROM record_heads WHERE record_id = 'grant_a'").get()).toEqual({ revision_id: 'rev_a3' });
      expect(() => db.prepare("INSERT INTO record_heads(record_id, revision_id) VALUES ('grant_x', 'rev_none')").run()).toThrow(/FOREIGN KEY/);
      insert(db, 'control_appends', CONTROL_APPEND_COLS).run('prj_1', 'main', 3, 'evt_3', 'rw003.delegation.amended', null, 'sha256:i3', 'sha256:e3', '{}', 'delegation', 'amended');
      expect(db.prepare("SELECT position, event_id, state FROM control_heads WHERE project_id = 'prj_1'").get()).toEqual({ position: 3n, event_id: 'evt_3', state: 'amended' });
      expect(() => db.prepare("UPDATE ledger_balances SET reserved = 9 WHERE node_id = 'dlg_root' AND dimension = 'invocations'").run(), 'ceiling').toThrow(/CHECK/);
      expect(() => db.prepare("INSERT INTO ledger_balances(node_id, dimension, unit, ceiling) VALUES ('dlg_none', 'invocations', 'count', 1)").run()).toThrow(/FOREIGN KEY/);
      expect(() => db.prepare("INSERT INTO attempt_work(effect_id, attempt_id, reservation_id, lease_until, tries, deadline, created_at) VALUES ('eff_1', 'a', 'r', ?, 0, ?, ?)").run(AT, AT, AT)).toThrow(/UNIQUE|PRIMARY KEY/);
      expect(
        db.prepare("EXPLAIN QUERY PLAN SELECT effect_id FROM attempt_work WHERE lease_until <= ?").all(AT).map((p) => (p as { detail: string }).detail),
        'the due index is kept and used',
      ).toContain('SEARCH attempt_work USING COVERING INDEX attempt_work_due (lease_until<?)');
    } finally {
      await store.close();
    }
  });

  it('a fresh store has them WITHOUT ROWID too', async () => {
    const store = SqliteStore.open(join(dir, 'fresh.db'), { create: true });
    try {
      const rowless = (store.handle.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%WITHOUT ROWID'").all() as Array<{ name: string }>).map((r) => r.name);
      // Named here, not read from the migration's list: dropping a table from that list must fail this.
      expect(rowless.sort()).toEqual(['attempt_work', 'control_heads', 'ledger_balances', 'ledger_live_roots', 'ledger_preset_windows', 'ledger_unresolved_counts', 'record_heads']);
    } finally {
      await store.close();
    }
  });
});
