import pg from 'pg';
import { afterAll, describe } from 'vitest';
import { PgStore } from '../src/store/postgres/store.ts';
import { freshSchema, PG_URL } from '../test/store/support/pg.ts';
import { statementsSuite, type SqlTally } from './statements-suite.ts';

/** Wraps pg's Client.query (this worker only) to count each statement sent. */
function countingPg(): SqlTally {
  const tally: SqlTally = { statements: 0, writeTransactions: 0, byText: new Map(), reset: () => ((tally.statements = 0), (tally.writeTransactions = 0), tally.byText.clear()) };
  const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const orig = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string } | undefined)?.text ?? '');
    const sql = text.replace(/\s+/g, ' ').trim();
    if (sql === 'BEGIN') tally.writeTransactions++;
    else if (!/^(COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/.test(sql)) {
      tally.statements++;
      tally.byText.set(sql.slice(0, 100), (tally.byText.get(sql.slice(0, 100)) ?? 0) + 1);
    }
    return orig.apply(this, args);
  };
  return tally;
}

describe.skipIf(!PG_URL)('postgres', () => {
  let drop: (() => Promise<void>) | undefined;
  afterAll(async () => drop?.());
  statementsSuite('postgres', async () => {
    const db = await freshSchema();
    drop = db.drop;
    return {
      store: { kind: 'postgres', url: db.url },
      open: async () => {
        const tally = countingPg();
        return { store: await PgStore.open(db.url, { max: 4 }), tally };
      },
    };
  });
});
