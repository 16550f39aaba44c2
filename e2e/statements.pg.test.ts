import pg from 'pg';
import { afterAll, describe } from 'vitest';
import { Pipeline } from '../src/store/postgres/pipeline.ts';
import { PgStore } from '../src/store/postgres/store.ts';
import { freshSchema, PG_URL } from '../test/store/support/pg.ts';
import { sqlTally } from '../test/helpers/sql-tally.ts';
import { statementsSuite, type SqlTally } from './statements-suite.ts';

/** Wraps pg's Client.query (this worker only) to count each statement sent, and each round trip: a pipeline's statements share one (src/store/postgres/pipeline.ts). */
function countingPg(): SqlTally {
  const { tally, note } = sqlTally('BEGIN');
  const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const orig = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const q = args[0];
    if (q instanceof Pipeline) for (const s of q.statements) note(s.text);
    else note(typeof q === 'string' ? q : ((q as { text?: string } | undefined)?.text ?? ''));
    tally.roundTrips++;
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
