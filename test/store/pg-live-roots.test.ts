import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { PgStore } from '../../src/store/postgres/store.ts';
import { freshSchema, PG_URL } from './support/pg.ts';
import { liveRootsAgreeWithTheRule, presetWindowFollowsAnyClock, pruneForgetsExpiredRoots, type CountQuery } from './support/live-roots.ts';

/** Runs a count with named placeholders on one client. */
const countOn =
  (client: pg.Client): CountQuery =>
  async (sql, values) => {
    const params: string[] = [];
    const text = sql((name) => (params.push(values[name]!), `$${params.length}`));
    return Number((await client.query<{ n: string }>(text, params)).rows[0]!.n);
  };

describe.skipIf(!PG_URL)('postgres: live roots', () => {
  let db: Awaited<ReturnType<typeof freshSchema>>;
  beforeAll(async () => {
    db = await freshSchema();
  });
  afterAll(async () => db?.drop());

  it('capacity counts over the live-root table agree with the rule over every ledger row', async () => {
    const store = await PgStore.open(db.url, { max: 2 });
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await liveRootsAgreeWithTheRule(
        store,
        countOn(client),
        25,
      );
    } finally {
      await client.end();
      await store.close();
    }
  }, 180_000);

  it('opening a root forgets never-reserved roots that expired a margin before it', async () => {
    const store = await PgStore.open(db.url, { max: 2 });
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await pruneForgetsExpiredRoots(store, countOn(client));
    } finally {
      await client.end();
      await store.close();
    }
  });

  it('a preset\'s issuance count is exact through a clock that goes back, and its window never moves back', async () => {
    const store = await PgStore.open(db.url, { max: 2 });
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await presetWindowFollowsAnyClock(store, countOn(client));
    } finally {
      await client.end();
      await store.close();
    }
  });
});
