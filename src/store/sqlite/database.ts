/**
 * Opening the embedded SQLite file. Durability settings are not negotiable:
 * WAL with synchronous=FULL so an acknowledged write survives power loss
 * (once the store's group commit takes the connection over, every write is
 * one of its batches and it syncs the WAL itself, after COMMIT, with the
 * connection at synchronous=NORMAL: group-commit.ts), and
 * writers take the lock up front (BEGIN IMMEDIATE) so two processes never
 * discover a conflict half-way through a transaction.
 *
 * ADR-0014: "Unreadable, corrupt or incomplete previously initialized state
 * prevents affected admission; it is not an empty budget." The marker beside
 * the file names the database's store id and schema generation; once it
 * exists, a file that is missing, empty, lacks a table, is an older
 * generation or carries another store id is storage_error, never a fresh start.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { storageError } from '../../errors.ts';
import { markerMismatch, StoreMarker, tablesOf } from '../meta.ts';
import { MIGRATIONS } from './migrations.ts';

export type Db = Database.Database;

export interface OpenOptions {
  /** Create the file when it does not exist. Never creates over a marker of a previous one. */
  create?: boolean;
  /** Milliseconds a writer waits for another process's lock. */
  busyTimeoutMs?: number;
}

const LATEST = MIGRATIONS[MIGRATIONS.length - 1]!.version;
const TABLES = tablesOf(MIGRATIONS);

/**
 * Opens (and migrates) the database at `path`. See the module comment for
 * what counts as a previously initialised store.
 */
export function openDatabase(path: string, opts: OpenOptions = {}): Db {
  const marker = readMarker(path);
  if (!existsSync(path)) {
    if (marker) throw storageError('database file is missing but was initialised before', { path });
    if (!opts.create) throw storageError('database file does not exist (run `baton init`)', { path });
    // Private by default: the ledger and sealed push credentials live here (0700 dir, 0600 file;
    // SQLite gives its -wal and -shm files the mode of the database file).
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    closeSync(openSync(path, 'wx', 0o600));
  } else if (marker && statSync(path).size === 0) {
    throw storageError('database file is empty but was initialised before', { path, reason: 'empty' });
  }
  const db = connect(path, opts);
  try {
    if (marker) checkAgainst(db, marker, path);
    migrate(db, path);
    const { storeId, generation } = bumpGeneration(db);
    const now = readMarker(path); // another process may have moved it meanwhile: never move it back
    if (!now || now.store_id !== storeId || now.generation < generation || now.schema !== LATEST) {
      writeMarker(path, { store_id: storeId, schema: LATEST, generation: Math.max(generation, now?.store_id === storeId ? now.generation : 0), created_at: marker?.created_at ?? new Date().toISOString() });
    }
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * Page cache per connection, KiB. SQLite's default is 2 MiB: with a million
 * retained records the request path's index pages no longer fit it, and
 * admission grew 1.79× from 10^3 to 10^6 records (issue #15). Not more than
 * 16 MiB either: when a B-tree page split reorders its sibling pages, SQLite
 * 3.53 renumbers one through the pending-byte page (~262,145), and the COMMIT
 * that follows then walks every page in the cache to drop those past the end
 * of the file (pcache1TruncateUnsafe), ~0.35 ms at 64 MiB. Linux perf of the
 * request thread (issue #24): that walk was 1.8 % of it at c=1 and 2.3 % at
 * c=32 with 64 MiB, 0.5 % and 0.7 % with 16 MiB; admission at 10^6 retained
 * records against 10^3 was 0.87× with 16 MiB (bench/growth.ts), reads from
 * the file 0.01 %.
 */
export const PAGE_CACHE_KIB = 16_384;

function connect(path: string, opts: OpenOptions): Db {
  let db: Db | undefined;
  try {
    db = new Database(path, { fileMustExist: true });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    // Deleted and overwritten cells are zeroed, so purged content does not linger in free pages (issue 25 item 16).
    db.pragma('secure_delete = ON');
    db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
    // Statement journals and transient tables in memory (issue #24). A statement that writes more than one row or
    // fires a trigger needs a statement journal; with temp_store = FILE (this build's default) such statements cost
    // far more here — a two-row INSERT into ledger_nodes 290 µs instead of 28, a root's one-row INSERT (its trigger)
    // 104 instead of 25 — and SQL per delegated call fell from 2.1 to 1.3 ms with this pragma. The trade: a sort or
    // temporary table too large for memory no longer spills to a temporary file.
    db.pragma('temp_store = MEMORY');
    db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 10_000}`);
    db.defaultSafeIntegers(true);
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`quick_check: ${String(check).slice(0, 200)}`);
    return db;
  } catch (cause) {
    db?.close();
    throw storageError('database file is unreadable or corrupt', { path }, cause);
  }
}

/** Before migrating: the file must still be the store the marker names (a lost WAL would otherwise be re-created empty). */
function checkAgainst(db: Db, marker: StoreMarker, path: string): void {
  const present = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name));
  // Tables a newer migration adds than the marker's generation may legitimately be absent yet.
  const expected = tablesOf(MIGRATIONS.filter((m) => m.version <= marker.schema));
  const missingTables = present.has('schema_migrations') ? expected.filter((t) => !present.has(t)) : ['schema_migrations', ...expected];
  const schema = present.has('schema_migrations') ? Number((db.prepare('SELECT max(version) AS v FROM schema_migrations').get() as { v: bigint | null }).v ?? 0n) : 0;
  const meta = present.has('baton_meta') ? (db.prepare('SELECT store_id, generation FROM baton_meta').get() as { store_id: string; generation: bigint } | undefined) : undefined;
  // A marker written before store ids existed binds to "an initialised store of generation 4".
  const storeId = meta?.store_id ?? (marker.schema < 5 ? marker.store_id : undefined);
  const why = markerMismatch(marker, { schema, storeId, generation: Number(meta?.generation ?? 0n), missingTables });
  if (why) throw storageError(`database does not match its initialisation marker (${why})`, { path, reason: 'marker_mismatch' });
}

function migrate(db: Db, path: string): void {
  try {
    db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL) STRICT');
    const row = db.prepare('SELECT max(version) AS v FROM schema_migrations').get() as { v: bigint | null };
    const current = Number(row.v ?? 0n);
    if (current > LATEST) throw storageError('database schema is newer than this build', { path, current, latest: LATEST });
    for (const m of MIGRATIONS.filter((m) => m.version > current)) {
      immediate(db, () => {
        // Read again under the write lock: another process opening the same file may have applied it while this one waited.
        if (db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(m.version)) return;
        db.exec(m.sql);
        m.run?.(db);
        db.prepare('INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)').run(m.version, new Date().toISOString());
      });
    }
    const present = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name));
    const missing = TABLES.filter((t) => !present.has(t));
    if (missing.length > 0) throw storageError('database is missing tables', { path, reason: 'missing_table', tables: missing });
  } catch (cause) {
    if (cause instanceof Error && cause.name === 'BatonError') throw cause;
    throw storageError('database migration failed', { path }, cause);
  }
}

/** Creates the identity row on first open; every open bumps the generation (see StoreMarker). */
function bumpGeneration(db: Db): { storeId: string; generation: number } {
  return immediate(db, () => {
    const row = db.prepare('SELECT store_id, generation FROM baton_meta').get() as { store_id: string; generation: bigint } | undefined;
    if (!row) {
      const id = `sto_${randomUUID().replace(/-/g, '')}`;
      db.prepare('INSERT INTO baton_meta(singleton, store_id, generation, created_at) VALUES (1, ?, 1, ?)').run(id, new Date().toISOString());
      return { storeId: id, generation: 1 };
    }
    db.prepare('UPDATE baton_meta SET generation = generation + 1').run();
    return { storeId: row.store_id, generation: Number(row.generation) + 1 };
  });
}

function markerPath(path: string): string {
  return `${path}.initialized`;
}

/** The marker, if any. A pre-identity marker (a bare timestamp) binds to "some initialised store" of generation 4. */
function readMarker(path: string): StoreMarker | undefined {
  const file = markerPath(path);
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8').trim();
  if (!text.startsWith('{')) return { store_id: '(legacy)', schema: 4, generation: 0, created_at: text };
  try {
    return StoreMarker.parse(JSON.parse(text));
  } catch (cause) {
    throw storageError('database initialisation marker is unreadable', { path: file }, cause);
  }
}

function writeMarker(path: string, marker: StoreMarker): void {
  const file = markerPath(path);
  // A temporary name of its own: processes opening the store together (CLI beside a server, --workers)
  // each write then rename; a shared name let one rename the other's file away (ENOENT).
  const tmp = `${file}.${randomUUID()}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(marker)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
  chmodSync(file, 0o600);
}

/**
 * Copies every WAL frame into the database and truncates the WAL, so older
 * versions of purged rows no longer sit in it. False when another connection's
 * read kept frames the checkpoint could not copy (the next purge retries).
 * `busyMs`: the store's configured busy_timeout (the connection's own is 0
 * while a group commit holds it: group-commit.ts).
 */
export function checkpointTruncate(db: Db, busyMs: number): boolean {
  // The wait for other processes' readers and writers blocks this process's event loop: bound it well below busy_timeout.
  const before = db.pragma('busy_timeout', { simple: true }) as number | bigint;
  db.pragma(`busy_timeout = ${Math.min(busyMs, CHECKPOINT_WAIT_MS)}`);
  try {
    const [row] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number | bigint }>;
    return Number(row?.busy ?? 1) === 0;
  } finally {
    db.pragma(`busy_timeout = ${Number(before)}`);
  }
}

const CHECKPOINT_WAIT_MS = 1_000;

/** Whether `db` is a file in WAL mode: one with a -wal file to sync (group-commit.ts) and to checkpoint (checkpointer.ts). */
export function isWalFile(db: Db): boolean {
  return !db.memory && String(db.pragma('journal_mode', { simple: true })).toLowerCase() === 'wal';
}

/** Runs `fn` inside BEGIN IMMEDIATE … COMMIT, rolling back on any throw. */
export function immediate<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}

/** Reads the marker's creation time; used by `baton init` to report state. */
export function initializedAt(path: string): string | undefined {
  return readMarker(path)?.created_at;
}
