/**
 * Both dialects' migrations come from one DDL source (src/store/core-sql.ts,
 * push-sql.ts, meta.ts, work-sql.ts): a fresh SQLite file and a fresh
 * PostgreSQL schema must hold the same tables, columns, nullability, indexes
 * and immutability triggers, at the same migration version.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_MIGRATIONS } from '../../src/store/postgres/schema.ts';
import { PgStore } from '../../src/store/postgres/store.ts';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { freshSchema, PG_URL } from './support/pg.ts';

interface Shape {
  columns: Record<string, string[]>;
  /** `name(column, …)` */
  indexes: string[];
  /** Tables that refuse UPDATE and DELETE. */
  immutable: string[];
  version: number;
}

/** SQLite INTEGER is 64-bit; PostgreSQL spells the same column integer or bigint. */
const typeClass = (t: string) => (/int/i.test(t) ? 'int' : t.toLowerCase());

describe.skipIf(!PG_URL)('one DDL source, two dialects', () => {
  let db: Awaited<ReturnType<typeof freshSchema>>;
  let dir: string;
  beforeAll(async () => {
    db = await freshSchema();
    dir = mkdtempSync(join(tmpdir(), 'baton-schema-'));
  });
  afterAll(async () => {
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function sqliteShape(): Promise<Shape> {
    const store = SqliteStore.open(join(dir, 'schema.db'), { create: true });
    try {
      const all = <T>(sql: string) => store.handle.prepare(sql).all() as T[];
      const tables = all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY name");
      const columns: Record<string, string[]> = {};
      for (const { name } of tables) {
        columns[name] = all<{ name: string; type: string; notnull: bigint; pk: bigint }>(`PRAGMA table_info(${name})`).map(
          (c) => `${c.name} ${typeClass(c.type)}${c.notnull || c.pk ? ' not null' : ''}`,
        );
      }
      const indexes = all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name").map(
        (r) => `${r.name}(${all<{ name: string }>(`PRAGMA index_info(${r.name})`).map((c) => c.name).join(', ')})`,
      );
      const triggers = all<{ tbl_name: string; sql: string }>("SELECT tbl_name, sql FROM sqlite_master WHERE type = 'trigger'");
      const immutable = [...new Set(triggers.map((t) => t.tbl_name))].filter((t) => ['UPDATE', 'DELETE'].every((op) => triggers.some((x) => x.tbl_name === t && x.sql.includes(`BEFORE ${op}`)))).sort();
      const version = Number(all<{ v: bigint }>('SELECT max(version) AS v FROM schema_migrations')[0]!.v);
      return { columns, indexes, immutable, version };
    } finally {
      await store.close();
    }
  }

  async function pgShape(): Promise<Shape> {
    await (await PgStore.open(db.url)).close();
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const rows = async <T>(sql: string) => (await c.query(sql)).rows as T[];
      const cols = await rows<{ table_name: string; column_name: string; data_type: string; is_nullable: string }>(
        "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = current_schema() AND table_name <> 'schema_migrations' ORDER BY table_name, ordinal_position",
      );
      const columns: Record<string, string[]> = {};
      for (const r of cols) (columns[r.table_name] ??= []).push(`${r.column_name} ${typeClass(r.data_type)}${r.is_nullable === 'NO' ? ' not null' : ''}`);
      // Constraint-backed indexes (primary keys, UNIQUE) are implicit in SQLite's sqlite_master too (sql IS NULL).
      const indexes = (
        await rows<{ indexname: string; cols: string }>(
          `SELECT i.indexname, (SELECT string_agg(a.attname, ', ' ORDER BY k.ord) FROM pg_index x CROSS JOIN unnest(x.indkey) WITH ORDINALITY k(attnum, ord)
              JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
              WHERE x.indexrelid = (current_schema() || '.' || i.indexname)::regclass) AS cols
           FROM pg_indexes i WHERE schemaname = current_schema() AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conname = i.indexname AND k.connamespace = current_schema()::regnamespace) ORDER BY indexname`,
        )
      ).map((r) => `${r.indexname}(${r.cols})`);
      const triggers = await rows<{ event_object_table: string; event_manipulation: string }>(
        // Immutability is a BEFORE trigger (core-sql.ts); the unresolved counter's AFTER triggers on ledger_reservations are not.
        "SELECT event_object_table, event_manipulation FROM information_schema.triggers WHERE trigger_schema = current_schema() AND action_timing = 'BEFORE'",
      );
      const immutable = [...new Set(triggers.map((t) => t.event_object_table))].filter((t) => ['UPDATE', 'DELETE'].every((op) => triggers.some((x) => x.event_object_table === t && x.event_manipulation === op))).sort();
      const version = (await rows<{ v: number }>('SELECT max(version) AS v FROM schema_migrations'))[0]!.v;
      return { columns, indexes, immutable, version };
    } finally {
      await c.end();
    }
  }

  it('creates the same tables, columns, indexes and immutable tables in both', async () => {
    const [lite, post] = [await sqliteShape(), await pgShape()];
    expect(Object.keys(post.columns).sort()).toEqual(Object.keys(lite.columns).sort());
    // PostgreSQL's unresolved counter is striped, a row per namespace and connection (unresolved-sql.ts UNRESOLVED_COUNTER_PG).
    const striped = (cols: string[] | undefined) => cols?.flatMap((c) => (c.startsWith('owner_namespace ') ? [c, 'stripe int not null'] : [c]));
    for (const table of Object.keys(lite.columns)) expect(post.columns[table], table).toEqual(table === 'ledger_unresolved_counts' ? striped(lite.columns[table]) : lite.columns[table]);
    // Both count unresolved reservations in counter rows, and dropped the namespace index only the walk read (17 and 26).
    // Each index by name and columns: since migration 28 the retained count reads nodes' expiry off ledger_nodes_by_root.
    expect(post.indexes).toEqual(lite.indexes);
    expect(post.indexes).toContain('ledger_nodes_by_root(root_id, not_after)');
    expect(post.indexes.filter((i) => i.startsWith('ledger_reservations_live'))).toEqual([]);
    expect(lite.immutable).toEqual(['control_events', 'ledger_entries', 'records']);
    expect(post.immutable).toEqual(lite.immutable);
    expect(post.version).toBe(lite.version);
    expect(MIGRATIONS.map((m) => m.version)).toEqual(PG_MIGRATIONS.map((m) => m.version));
  });

  it('keeps revision_id unique on records and, since migration 21, no constraint on content_digest', async () => {
    await (await PgStore.open(db.url)).close();
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const { rows } = await c.query<{ conname: string }>(
        "SELECT conname FROM pg_constraint WHERE conrelid = (current_schema() || '.records')::regclass AND contype = 'u' ORDER BY conname",
      );
      expect(rows.map((r) => r.conname)).toEqual(['records_revision_id_key']);
    } finally {
      await c.end();
    }
  });
});
