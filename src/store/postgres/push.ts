/** The PostgreSQL half of push storage: the shared statements, on the pool. */
import type { PushStore } from '../port.ts';
import { composePush, type PushDialect } from '../push-sql.ts';

/** `query` runs one statement on the pool, wrapping driver errors (PgStore's). */
export function pgPush(query: <T>(sql: string, params: unknown[]) => Promise<T[]>): PushStore {
  return composePush(pgDialect(query));
}

/** The shared-statement dialect (push, work queue) on the pool. */
export function pgDialect(query: <T>(sql: string, params: unknown[]) => Promise<T[]>): PushDialect {
  return {
    p: (n) => `$${n}`,
    // Rows another claimer has locked are skipped rather than waited for; once it commits they are no longer due.
    lock: ' FOR UPDATE SKIP LOCKED',
    all: (sql, params) => query(sql, [...params]),
  };
}
