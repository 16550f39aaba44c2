/**
 * Counts SQL statements by normalised text (issue #24: statements are
 * counted, never timed). Write transactions are counted apart; the other
 * transaction bookends are not statements of the work itself.
 */
import Database from 'better-sqlite3';

export interface SqlTally {
  statements: number;
  writeTransactions: number;
  /** Whether a write transaction is open: its BEGIN sent and neither COMMIT nor ROLLBACK since. */
  inWrite: boolean;
  /** Executions by the statement's text, whitespace collapsed. */
  byText: Map<string, number>;
  /** Requests sent to a database server, bookends included (a PostgreSQL pipeline of statements is one); 0 in process. */
  roundTrips: number;
  reset(): void;
}

/** An empty tally, and how one statement sent is counted in it (`begin`: the store's text that opens a write transaction). */
export function sqlTally(begin: string): { tally: SqlTally; note(text: string): void } {
  const tally: SqlTally = {
    statements: 0,
    writeTransactions: 0,
    inWrite: false,
    byText: new Map(),
    roundTrips: 0,
    reset: () => ((tally.statements = 0), (tally.writeTransactions = 0), (tally.roundTrips = 0), tally.byText.clear()),
  };
  const note = (text: string) => {
    const sql = text.replace(/\s+/g, ' ').trim();
    if (sql === begin) {
      tally.writeTransactions++;
      tally.inWrite = true;
    } else if (/^(COMMIT|ROLLBACK)$/.test(sql)) tally.inWrite = false;
    else if (!/^(COMMIT|ROLLBACK|SAVEPOINT|RELEASE|ROLLBACK TO)\b/.test(sql)) {
      tally.statements++;
      tally.byText.set(sql, (tally.byText.get(sql) ?? 0) + 1);
    }
  };
  return { tally, note };
}

/** Calls `hook` with every prepared statement better-sqlite3 executes in this worker, before it runs; returns the undo. */
export function onSqliteStatements(hook: (stmt: Database.Statement) => void): () => void {
  const probe = new Database(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
  probe.close();
  const originals = new Map<string, (...a: unknown[]) => unknown>();
  for (const m of ['run', 'get', 'all', 'iterate']) {
    const orig = proto[m]!;
    originals.set(m, orig);
    proto[m] = function (this: Database.Statement, ...args: unknown[]) {
      hook(this);
      return orig.apply(this, args);
    };
  }
  return () => originals.forEach((fn, m) => (proto[m] = fn));
}

/** Counts what better-sqlite3 executes in this worker until `restore()`. */
export function countSqlite(): { tally: SqlTally; restore(): void } {
  const { tally, note } = sqlTally('BEGIN IMMEDIATE');
  return { tally, restore: onSqliteStatements((stmt) => note(stmt.source)) };
}
