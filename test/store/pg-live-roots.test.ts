import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgStore } from '../../src/store/postgres/store.ts';
import { freshSchema, PG_URL } from './support/pg.ts';
import { fourUnresolved, liveRootsAgreeWithTheRule, presetRateAcrossMigration24, presetWindowFollowsAnyClock, pruneForgetsExpiredRoots, type CountQuery } from './support/live-roots.ts';

/**
 * A store on `url`, and counts with named placeholders run on a client of its own; both closed after `fn`, which
 * may replace the store (reopened) by returning the new one.
 */
async function onStore(url: string, fn: (store: PgStore, count: CountQuery, client: pg.Client) => Promise<PgStore | void>): Promise<void> {
  let store = await PgStore.open(url, { max: 2 });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const count: CountQuery = async (sql, values) => {
      const params: string[] = [];
      const text = sql((name) => (params.push(values[name]!), `$${params.length}`));
      return Number((await client.query<{ n: string }>(text, params)).rows[0]!.n);
    };
    store = (await fn(store, count, client)) ?? store;
  } finally {
    await client.end();
    await store.close();
  }
}

/** The store as migration 25 left it: no unresolved counter, the namespace index still there. */
const UNDO_26 = 'DROP FUNCTION ledger_unresolved_count() CASCADE; DROP TABLE ledger_unresolved_counts; CREATE INDEX ledger_reservations_live ON ledger_reservations(owner_namespace, status);';

describe.skipIf(!PG_URL)('postgres: live roots', () => {
  let db: Awaited<ReturnType<typeof freshSchema>>;
  beforeAll(async () => {
    db = await freshSchema();
  });
  afterAll(async () => db?.drop());

  it('capacity counts over the live-root table agree with the rule over every ledger row', () => onStore(db.url, (store, count) => liveRootsAgreeWithTheRule(store, count, 25, 'stripes')), 180_000);

  it('opening a root forgets never-reserved roots that expired a margin before it', () => onStore(db.url, pruneForgetsExpiredRoots));

  it('a preset\'s issuance count is exact through a clock that goes back, and its window never moves back', () => onStore(db.url, presetWindowFollowsAnyClock));

  it('migration 24 on a store whose preset already issued this minute: the rate counts those roots, exactly', async () => {
    const own = await freshSchema();
    try {
      await onStore(own.url, (store, count, client) =>
        presetRateAcrossMigration24(store, count, async () => {
          await client.query(`DROP TRIGGER ledger_preset_window_on_issue ON ledger_nodes; DROP FUNCTION ledger_preset_window_on_issue();
            DROP TABLE ledger_preset_windows; ${UNDO_26} DELETE FROM schema_migrations WHERE version >= 24`);
          await store.close();
          return PgStore.open(own.url, { max: 2 });
        }),
      );
    } finally {
      await own.drop();
    }
  });

  describe('the unresolved counter (migration 26)', () => {
    const counted = async (client: pg.Client, ns: string) =>
      Number((await client.query<{ n: string | null }>('SELECT sum(n) AS n FROM ledger_unresolved_counts WHERE owner_namespace = $1', [ns])).rows[0]!.n ?? 0);
    const held = async (client: pg.Client, ns: string) =>
      Number((await client.query<{ n: string }>("SELECT count(*) AS n FROM ledger_reservations WHERE owner_namespace = $1 AND status IN ('held', 'unknown')", [ns])).rows[0]!.n);

    it('counts the unresolved reservations a store already holds, the triggers keep counting, and the namespace index goes', async () => {
      const own = await freshSchema();
      try {
        await onStore(own.url, async (first, _count, client) => {
          let store = first;
          const { ns, ids, settle, admit } = await fourUnresolved(store);
          expect(await counted(client, ns)).toBe(4);
          await client.query(`${UNDO_26} DELETE FROM schema_migrations WHERE version >= 26`);
          await store.close();
          store = await PgStore.open(own.url, { max: 2 });
          expect(await counted(client, ns), 'filled from the rows').toBe(4);
          expect((await client.query("SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'ledger_reservations_live'")).rowCount, 'index dropped').toBe(0);
          await settle(store, ids[2]!, 'measured');
          await settle(store, ids[3]!, 'measured');
          expect(await counted(client, ns)).toBe(2);
          await admit(store);
          expect(await counted(client, ns)).toBe(3);
          return store;
        });
      } finally {
        await own.drop();
      }
    });

    it('two stores admitting and resolving at once on their own connections: the stripes sum to the unresolved rows', async () => {
      await onStore(db.url, async (a, _count, client) => {
        const b = await PgStore.open(db.url, { max: 4 });
        try {
          const { ns, settle, admit } = await fourUnresolved(a);
          const ids = await Promise.all(Array.from({ length: 24 }, (_, i) => admit(i % 2 === 0 ? a : b)));
          // Resolved on the other store than admitted: the -1 lands on another connection's stripe.
          await Promise.all(ids.slice(0, 10).map((id, i) => settle(i % 2 === 0 ? b : a, id, i % 3 === 0 ? 'unknown' : 'measured')));
          const stripes = Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM ledger_unresolved_counts WHERE owner_namespace = $1', [ns])).rows[0]!.n);
          expect(stripes, 'more than one connection counted').toBeGreaterThan(1);
          expect(await counted(client, ns)).toBe(await held(client, ns));
          expect(await counted(client, ns)).toBe(4 + 24 - 10 + 4); // the 4 settled unknown stay unresolved
        } finally {
          await b.close();
        }
      });
    });
  });
});
