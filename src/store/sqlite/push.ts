/** The SQLite half of push storage: the shared statements, with prepared statements cached by text. */
import type Database from 'better-sqlite3';
import type { PushStore } from '../port.ts';
import { composePush, type PushDialect } from '../push-sql.ts';
import type { Db } from './database.ts';

/** What the shared-statement dialect runs its statements with (SqliteStore's). */
export interface SqliteRunners {
  /** Runs a read, turning driver errors into storage_error. */
  guard: <T>(fn: () => T) => T;
  /** Runs a write as a program of the store's group commit: it settles once the write is durable (group-commit.ts). */
  write: <T>(fn: () => T) => Promise<T>;
}

export function sqlitePush(db: Db, run: SqliteRunners): PushStore {
  return composePush(sqliteDialect(db, run));
}

/** The shared-statement dialect (push, work queue, content) on one SQLite handle. */
export function sqliteDialect(db: Db, { guard, write }: SqliteRunners): PushDialect {
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
    all: async <T>(sql: string, params: readonly unknown[]) => {
      const stmt = guard(() => prepare(sql));
      const bound = Object.fromEntries(params.map((v, i) => [`p${i + 1}`, v]));
      if (stmt.readonly) return guard(() => stmt.all(bound) as T[]);
      // A write (RETURNING or not) shares the group commit's transaction and fsync: the connection does not sync
      // on COMMIT itself (group-commit.ts).
      return write(() => (stmt.reader ? (stmt.all(bound) as T[]) : (stmt.run(bound), [])));
    },
  };
}
