/** The SQLite half of push storage: the shared statements, with prepared statements cached by text. */
import type Database from 'better-sqlite3';
import type { PushStore } from '../port.ts';
import { composePush, type PushDialect } from '../push-sql.ts';
import type { Db } from './database.ts';

/** `guard` turns driver errors into storage_error (SqliteStore's). */
export function sqlitePush(db: Db, guard: <T>(fn: () => T) => T): PushStore {
  return composePush(sqliteDialect(db, guard));
}

/** The shared-statement dialect (push, work queue) on one SQLite handle. */
export function sqliteDialect(db: Db, guard: <T>(fn: () => T) => T): PushDialect {
  const cache = new Map<string, Database.Statement>();
  const prepare = (sql: string) => {
    let stmt = cache.get(sql);
    if (!stmt) {
      // enqueue's text varies with its batch size; keep the cache bounded.
      if (cache.size >= 64) cache.delete(cache.keys().next().value!);
      cache.set(sql, (stmt = db.prepare(sql)));
    }
    return stmt;
  };
  return {
    // Named, so one parameter can appear twice; better-sqlite3 has no numbered ones.
    p: (n) => `@p${n}`,
    // A write statement takes the database's write lock before it reads, so claims never interleave.
    lock: '',
    all: async <T>(sql: string, params: readonly unknown[]) =>
      guard(() => {
        const stmt = prepare(sql);
        const bound = Object.fromEntries(params.map((v, i) => [`p${i + 1}`, v]));
        if (stmt.reader) return stmt.all(bound) as T[];
        stmt.run(bound);
        return [];
      }),
  };
}
