import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { PgStore } from '../../src/store/postgres/store.ts';
import { freshSchema, PG_URL } from './support/pg.ts';
import { liveRootsAgreeWithTheRule, pruneForgetsExpiredRoots } from './support/live-roots.ts';

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
        async (sql, values) => {
          const params: string[] = [];
          const text = sql((name) => (params.push(values[name]!), `$${params.length}`));
          return Number((await client.query<{ n: string }>(text, params)).rows[0]!.n);
        },
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
      await pruneForgetsExpiredRoots(store, async (sql, values) => {
        const params: string[] = [];
        const text = sql((name) => (params.push(values[name]!), `$${params.length}`));
        return Number((await client.query<{ n: string }>(text, params)).rows[0]!.n);
      });
    } finally {
      await client.end();
      await store.close();
    }
  });
});
