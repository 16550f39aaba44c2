/**
 * SQLite migration 22 (issue #24): the request path's small keyed tables
 * become WITHOUT ROWID tables. A rowid table with a TEXT primary key is two
 * B-trees — the rows by rowid and the key's own index — so each row a
 * transaction writes dirties a page in both, and each dirty page is one WAL
 * frame at COMMIT (two pwrite calls and 4 KiB each; bench/wal-frames.ts).
 * Keyed by its primary key instead, the table is one B-tree
 * (sqlite.org/withoutrowid.html: the right choice for small rows looked up by
 * a non-integer key). Rows, constraints, indexes and triggers stay as they were.
 * (A microbenchmark of session 16 had found such tables slower; in the gateway,
 * timed statement by statement, SQL per delegated call came out about 5 %
 * lower and no statement slower: bench/run.ts history, session 23.)
 *
 * Only tables no foreign key names are rebuilt: a DROP of a referenced table
 * fails with foreign keys on, and PRAGMA foreign_keys cannot change inside the
 * migration's transaction. (ledger_nodes and ledger_reservations stay: rebuilt
 * the same way with foreign keys off, in a trial, they saved no frame measurably.)
 */
import type { Db } from './database.ts';

/** The tables migration 22 rebuilds. WAL frames per delegated call (bench/wal-frames.ts): 37.1 → 32.7 at c=32, 101.5 → 99.3 at c=1. */
export const WITHOUT_ROWID_TABLES = ['record_heads', 'control_heads', 'attempt_work', 'ledger_balances', 'ledger_live_roots'] as const;

/**
 * Rebuilds `table` as WITHOUT ROWID from its own stored definition (which
 * carries every column a later ALTER TABLE added), then makes its indexes and
 * triggers again. The rename runs with legacy_alter_table on, so SQLite does
 * not re-parse the views and triggers that name the table (record_appends and
 * the other append views) while the name is briefly unbound.
 */
export function rebuildWithoutRowid(db: Db, table: string): void {
  const def = db.prepare<[string], { sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table);
  if (!def) throw new Error(`migration 22: no table ${table}`);
  if (/WITHOUT ROWID\s*$/i.test(def.sql)) return;
  const dependents = db.prepare<[string], { sql: string }>("SELECT sql FROM sqlite_master WHERE tbl_name = ? AND type IN ('index', 'trigger') AND sql IS NOT NULL").all(table);
  const next = `${table}_next`;
  const header = /^CREATE TABLE\s+("?)(\w+)\1/i;
  if (!header.test(def.sql) || !/\)\s*STRICT\s*$/i.test(def.sql)) throw new Error(`migration 22: unexpected definition of ${table}`);
  db.exec(`${def.sql.replace(header, `CREATE TABLE ${next}`)}, WITHOUT ROWID`);
  db.exec(`INSERT INTO ${next} SELECT * FROM ${table}`);
  db.exec(`DROP TABLE ${table}`);
  db.pragma('legacy_alter_table = ON');
  try {
    db.exec(`ALTER TABLE ${next} RENAME TO ${table}`);
  } finally {
    db.pragma('legacy_alter_table = OFF');
  }
  for (const d of dependents) db.exec(d.sql);
}

/**
 * Migration 22. secure_delete is off while it copies, as in migration 21: the freed pages hold the rows the new
 * tables hold. Afterwards the connection gets back the setting it had (database.ts turns it on).
 */
export function withoutRowid(db: Db): void {
  const secureDelete = Number(db.pragma('secure_delete', { simple: true }));
  db.pragma('secure_delete = OFF');
  try {
    for (const t of WITHOUT_ROWID_TABLES) rebuildWithoutRowid(db, t);
  } finally {
    db.pragma(`secure_delete = ${secureDelete}`);
  }
}
