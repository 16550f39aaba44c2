/**
 * Server-side prepared statements (src/store/postgres/prepared.ts, issue
 * #24): each parameterised text is parsed once per connection under one
 * name, texts without parameters stay simple queries, the names are bounded,
 * and a statement a newer node's migration made stale (0A000 "cached plan
 * must not change result type") goes unnamed and runs again, so a running
 * store keeps answering while another node alters a table under it.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config.ts';
import { openStore } from '../../src/store/open.ts';
import { PgStore } from '../../src/store/postgres/store.ts';
import { stalePlan } from '../../src/store/postgres/failure.ts';
import { namingClient, StatementNames } from '../../src/store/postgres/prepared.ts';
import { Pipeline } from '../../src/store/postgres/pipeline.ts';
import { admission, decision, publishedChain } from './support/fixtures.ts';
import { freshSchema, PG_URL } from './support/pg.ts';

describe.skipIf(!PG_URL)('postgres: prepared statements', () => {
  let db: Awaited<ReturnType<typeof freshSchema>>;
  let admin: pg.Client;
  beforeAll(async () => {
    db = await freshSchema();
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await db?.drop();
  });

  /** One connection, so what it prepared is what pg_prepared_statements shows. */
  const onePool = (names?: StatementNames) => new pg.Pool({ connectionString: db.url, max: 1, ...(names ? { Client: namingClient(names) } : {}) });
  const prepared = async (pool: pg.Pool) =>
    (await pool.query<{ name: string; statement: string }>("SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'baton_%' ORDER BY name")).rows;

  it('parses a parameterised text once per connection, under one name, and leaves simple queries alone', async () => {
    const names = new StatementNames();
    const pool = onePool(names);
    try {
      for (let i = 0; i < 3; i++) expect((await pool.query<{ n: number }>('SELECT $1::int + 1 AS n', [i])).rows).toStrictEqual([{ n: i + 1 }]);
      const client = await pool.connect();
      try {
        // A callback, as pg-pool's own query passes one.
        const viaCallback = await new Promise((resolve, reject) => client.query('SELECT $1::int + 1 AS n', [41], (err: Error | null, res: pg.QueryResult) => (err ? reject(err) : resolve(res.rows))));
        expect(viaCallback).toStrictEqual([{ n: 42 }]);
        await client.query('BEGIN');
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      // The pg_prepared_statements query has no parameters: it is a simple query, not listed.
      expect(await prepared(pool)).toStrictEqual([{ name: 'baton_1', statement: 'SELECT $1::int + 1 AS n' }]);
      expect(names.size).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it('names at most its bound of texts; the rest go unnamed', async () => {
    const names = new StatementNames(2);
    const pool = onePool(names);
    try {
      for (const k of [1, 2, 3, 4]) await pool.query(`SELECT $1::int * ${k} AS n`, [k]);
      expect((await prepared(pool)).map((r) => r.statement)).toStrictEqual(['SELECT $1::int * 1 AS n', 'SELECT $1::int * 2 AS n']);
      expect([names.nameOf('SELECT $1::int * 3 AS n'), names.size]).toStrictEqual([undefined, 2]);
    } finally {
      await pool.end();
    }
  });

  it('a statement whose table changed under it is refused once as stale, then sent unnamed', async () => {
    await admin.query('CREATE TABLE prep_t (id int PRIMARY KEY, a text)');
    await admin.query("INSERT INTO prep_t VALUES (1, 'x')");
    const names = new StatementNames();
    const pool = onePool(names);
    const text = 'SELECT * FROM prep_t WHERE id = $1';
    try {
      expect((await pool.query(text, [1])).rows).toStrictEqual([{ id: 1, a: 'x' }]);
      await admin.query('ALTER TABLE prep_t ADD COLUMN b text');
      const refused = await pool.query(text, [1]).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(stalePlan(refused)).toBe(true);
      expect(names.nameOf(text)).toBeUndefined();
      expect((await pool.query(text, [1])).rows).toStrictEqual([{ id: 1, a: 'x', b: null }]);
    } finally {
      await pool.end();
    }
  });

  it('a store keeps answering reads and admissions after another node altered its tables', async () => {
    const store = await PgStore.open(db.url, { max: 1 });
    try {
      const { space, c } = await publishedChain(store);
      const rec = decision('eff_prep');
      await store.putRecord(rec);
      // Prepared on the store's one connection: the record read, and every statement of an admission.
      expect((await store.getRecord(rec.record_id))?.revision_id).toBe(rec.revision_id);
      await store.ledger.admit(await admission(store, space, [c.root, c.child, c.leaf], c.leaf));
      await admin.query('ALTER TABLE records ADD COLUMN prep_extra text');
      await admin.query('ALTER TABLE ledger_reservations ADD COLUMN prep_extra text');
      // The admission first: its transaction meets the stale claims read (the fence read outside it reads an unaltered table).
      await expect(store.ledger.admit(await admission(store, space, [c.root, c.child, c.leaf], c.leaf))).resolves.toMatchObject({ status: 'held', replayed: false });
      expect((await store.getRecord(rec.record_id))?.revision_id).toBe(rec.revision_id);
    } finally {
      await store.close();
      await admin.query('ALTER TABLE records DROP COLUMN prep_extra');
      await admin.query('ALTER TABLE ledger_reservations DROP COLUMN prep_extra');
    }
  });

  it('sends named statements by default and none with store.preparedStatements: false', async () => {
    const sent = { named: 0, unnamed: 0 };
    const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
    const orig = proto.query;
    proto.query = function (this: unknown, ...args: unknown[]) {
      const q = args[0];
      // A transaction's statements mostly go in pipelines (src/store/postgres/pipeline.ts), named where the store names them.
      if (q instanceof Pipeline) sent[q.names ? 'named' : 'unnamed'] += q.statements.filter((x) => (x.values ?? []).length > 0).length;
      else if (typeof q === 'object' && q !== null && 'name' in q) sent.named++;
      else if (Array.isArray(args[1])) sent.unnamed++;
      return orig.apply(this, args);
    };
    // As the gateway opens it: from the configuration's store block (src/store/open.ts).
    const admitOnce = async (preparedStatements?: boolean) => {
      const store = await openStore({ store: { kind: 'postgres', url: db.url, ...(preparedStatements === undefined ? {} : { preparedStatements }) } } as Config);
      try {
        const { space, c } = await publishedChain(store);
        sent.named = sent.unnamed = 0;
        await store.ledger.admit(await admission(store, space, [c.root, c.child, c.leaf], c.leaf));
        return { ...sent };
      } finally {
        await store.close();
      }
    };
    try {
      const byDefault = await admitOnce();
      expect(byDefault.named).toBeGreaterThan(3);
      expect(byDefault.unnamed).toBe(0);
      const off = await admitOnce(false);
      expect(off.named).toBe(0);
      expect(off.unnamed).toBe(byDefault.named);
    } finally {
      proto.query = orig;
    }
  });
});
