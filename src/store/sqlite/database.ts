/**
 * Opening the embedded SQLite file. Durability settings are not negotiable:
 * WAL with synchronous=FULL so an acknowledged write survives power loss, and
 * writers take the lock up front (BEGIN IMMEDIATE) so two processes never
 * discover a conflict half-way through a transaction.
 */
import { existsSync, mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { storageError } from '../../errors.ts';
import { MIGRATIONS } from './migrations.ts';

export type Db = Database.Database;

export interface OpenOptions {
  /** Create the file when it does not exist. Never creates over a marker of a previous one. */
  create?: boolean;
  /** Milliseconds a writer waits for another process's lock. */
  busyTimeoutMs?: number;
}

/**
 * Opens (and migrates) the database at `path`. A missing file that was
 * initialised before, a file that is not SQLite, a failed integrity check or a
 * schema newer than this build are storage_error — never an empty state
 * (ADR-0014: unreadable state is not an empty budget).
 */
export function openDatabase(path: string, opts: OpenOptions = {}): Db {
  const marker = `${path}.initialized`;
  if (!existsSync(path)) {
    if (existsSync(marker)) throw storageError('database file is missing but was initialised before', { path });
    if (!opts.create) throw storageError('database file does not exist (run `baton init`)', { path });
    mkdirSync(dirname(path), { recursive: true });
  }
  let db: Db;
  try {
    db = new Database(path, { fileMustExist: !opts.create });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 10_000}`);
    db.defaultSafeIntegers(true);
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`quick_check: ${String(check).slice(0, 200)}`);
  } catch (cause) {
    throw storageError('database file is unreadable or corrupt', { path }, cause);
  }
  migrate(db, path);
  if (!existsSync(marker)) writeFileSync(marker, `${new Date().toISOString()}\n`);
  return db;
}

function migrate(db: Db, path: string): void {
  try {
    db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL) STRICT');
    const row = db.prepare('SELECT max(version) AS v FROM schema_migrations').get() as { v: bigint | null };
    const current = Number(row.v ?? 0n);
    const latest = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;
    if (current > latest) throw storageError('database schema is newer than this build', { path, current, latest });
    for (const m of MIGRATIONS.filter((m) => m.version > current)) {
      immediate(db, () => {
        db.exec(m.sql);
        db.prepare('INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)').run(m.version, new Date().toISOString());
      });
    }
  } catch (cause) {
    if (cause instanceof Error && cause.name === 'BatonError') throw cause;
    throw storageError('database migration failed', { path }, cause);
  }
}

/** Runs `fn` inside BEGIN IMMEDIATE … COMMIT, rolling back on any throw. */
export function immediate<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}

/** Reads the marker's creation time; used by `baton init` to report state. */
export function initializedAt(path: string): string | undefined {
  const marker = `${path}.initialized`;
  return existsSync(marker) ? readFileSync(marker, 'utf8').trim() : undefined;
}
