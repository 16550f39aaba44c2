/**
 * Counts the SQL statements better-sqlite3 executes in this worker (issue
 * #24: statements are counted, never timed), by normalised text, until
 * `restore()`. Write transactions (BEGIN IMMEDIATE) are counted apart; the
 * other transaction bookends, and the group commit's switch of the
 * connection's sync level around each batch (group-commit.ts), are not
 * statements of the work itself.
 */
import Database from 'better-sqlite3';

export interface SqlTally {
  statements: number;
  writeTransactions: number;
  /** Executions by the statement's text, whitespace collapsed. */
  byText: Map<string, number>;
  reset(): void;
}

export function countSqlite(): { tally: SqlTally; restore(): void } {
  const tally: SqlTally = { statements: 0, writeTransactions: 0, byText: new Map(), reset: () => ((tally.statements = 0), (tally.writeTransactions = 0), tally.byText.clear()) };
  const proto = Object.getPrototypeOf(new Database(':memory:').prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
  const originals = new Map<string, (...a: unknown[]) => unknown>();
  for (const m of ['run', 'get', 'all', 'iterate']) {
    const orig = proto[m]!;
    originals.set(m, orig);
    proto[m] = function (this: { source: string }, ...args: unknown[]) {
      const sql = this.source.replace(/\s+/g, ' ').trim();
      if (sql === 'BEGIN IMMEDIATE') tally.writeTransactions++;
      else if (!/^(COMMIT|ROLLBACK|SAVEPOINT|RELEASE|ROLLBACK TO)\b|^PRAGMA synchronous =/.test(sql)) {
        tally.statements++;
        tally.byText.set(sql, (tally.byText.get(sql) ?? 0) + 1);
      }
      return orig.apply(this, args);
    };
  }
  return { tally, restore: () => originals.forEach((fn, m) => (proto[m] = fn)) };
}
