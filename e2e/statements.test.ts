import Database from 'better-sqlite3';
import { SqliteStore } from '../src/store/sqlite/store.ts';
import { statementsSuite, type SqlTally } from './statements-suite.ts';

/** Wraps better-sqlite3's statements (this worker only) to count each execution. */
function countingSqlite(): SqlTally {
  const tally: SqlTally = { statements: 0, writeTransactions: 0, byText: new Map(), reset: () => ((tally.statements = 0), (tally.writeTransactions = 0), tally.byText.clear()) };
  const proto = Object.getPrototypeOf(new Database(':memory:').prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
  for (const m of ['run', 'get', 'all', 'iterate']) {
    const orig = proto[m]!;
    proto[m] = function (this: { source: string }, ...args: unknown[]) {
      const sql = this.source.replace(/\s+/g, ' ').trim();
      if (sql === 'BEGIN IMMEDIATE') tally.writeTransactions++;
      // Transaction bookends are not statements of the work itself: nor is the group commit's switch of the
      // connection's sync level around each batch (group-commit.ts: the WAL is fsynced after COMMIT instead).
      else if (!/^(COMMIT|ROLLBACK|SAVEPOINT|RELEASE|ROLLBACK TO)\b|^PRAGMA synchronous =/.test(sql)) {
        tally.statements++;
        tally.byText.set(sql.slice(0, 100), (tally.byText.get(sql.slice(0, 100)) ?? 0) + 1);
      }
      return orig.apply(this, args);
    };
  }
  return tally;
}

statementsSuite('sqlite', async () => ({
  open: async (path) => {
    const tally = countingSqlite();
    return { store: SqliteStore.open(path, { create: true }), tally };
  },
}));
