/**
 * Catches writes that commit on their own on a store's SQLite connection.
 * The store's group commit runs the connection at synchronous=NORMAL and
 * syncs the WAL itself after each of its transactions (group-commit.ts), so a
 * write that commits outside it, in autocommit, would be answered before it is
 * durable. Watches better-sqlite3 in this worker (statements and exec) until
 * `restore()`; only connections passed to `watch` are judged.
 */
import Database from 'better-sqlite3';
import { onSqliteStatements } from './sql-tally.ts';

/** What a connection may run outside a transaction without writing anything: its transaction control and settings. */
const CONTROL = /^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|END|PRAGMA)\b/i;

export interface WriteWatch {
  /** Judges `db` from now on. */
  watch(db: Database.Database): void;
  /** Each write (its SQL) that ran on a watched connection outside any transaction. */
  readonly outside: string[];
  restore(): void;
}

export function watchOutsideWrites(): WriteWatch {
  const watched = new WeakSet<object>();
  const outside: string[] = [];
  const judge = (db: Database.Database, sql: string, readonly: boolean) => {
    if (watched.has(db) && !readonly && !db.inTransaction && !CONTROL.test(sql)) outside.push(sql.replace(/\s+/g, ' ').trim().slice(0, 120));
  };
  const restoreStatements = onSqliteStatements((stmt) => judge(stmt.database, stmt.source, stmt.readonly));
  const dbProto = Database.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
  const exec = dbProto.exec!;
  dbProto.exec = function (this: Database.Database, sql: unknown) {
    // exec runs a script of any statements: judged as a write unless it is transaction control or a setting.
    judge(this, String(sql), false);
    return exec.call(this, sql);
  };
  return {
    watch: (db) => void watched.add(db),
    outside,
    restore: () => {
      restoreStatements();
      dbProto.exec = exec;
    },
  };
}
