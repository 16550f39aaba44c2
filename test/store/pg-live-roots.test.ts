import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { PgStore } from '../../src/store/postgres/store.ts';
import { freshSchema, PG_URL } from './support/pg.ts';
import { liveRootsAgreeWithTheRule, presetRateAcrossMigration24, presetWindowFollowsAnyClock, pruneForgetsExpiredRoots, type CountQuery } from './support/live-roots.ts';

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

describe.skipIf(!PG_URL)('postgres: live roots', () => {
  let db: Awaited<ReturnType<typeof freshSchema>>;
  beforeAll(async () => {
    db = await freshSchema();
  });
  afterAll(async () => db?.drop());

  it('capacity counts over the live-root table agree with the rule over every ledger row', () => onStore(db.url, (store, count) => liveRootsAgreeWithTheRule(store, count, 25)), 180_000);

  it('opening a root forgets never-reserved roots that expired a margin before it', () => onStore(db.url, pruneForgetsExpiredRoots));

  it('a preset\'s issuance count is exact through a clock that goes back, and its window never moves back', () => onStore(db.url, presetWindowFollowsAnyClock));

  it('migration 24 on a store whose preset already issued this minute: the rate counts those roots, exactly', async () => {
    const own = await freshSchema();
    try {
      await onStore(own.url, (store, count, client) =>
        presetRateAcrossMigration24(store, count, async () => {
          await client.query(`DROP TRIGGER ledger_preset_window_on_issue ON ledger_nodes; DROP FUNCTION ledger_preset_window_on_issue();
            DROP TABLE ledger_preset_windows; DELETE FROM schema_migrations WHERE version >= 24`);
          await store.close();
          return PgStore.open(own.url, { max: 2 });
        }),
      );
    } finally {
      await own.drop();
    }
  });
});
