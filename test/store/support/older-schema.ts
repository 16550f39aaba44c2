/**
 * A SQLite database as an older build left it: migrations 1 to `version`
 * applied, and recorded, the way that build's store applied them. Upgrade
 * tests fill it, close it, and open it with today's store.
 */
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../../src/store/sqlite/migrations.ts';

export function databaseAtSchema(path: string, version: number): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL) STRICT');
  for (const m of MIGRATIONS.filter((m) => m.version <= version)) {
    db.exec(m.sql);
    m.run?.(db);
    db.prepare('INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)').run(m.version, '2026-12-01T10:00:00.000Z');
  }
  return db;
}
