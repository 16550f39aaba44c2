/**
 * Statements in one round trip (src/store/postgres/pipeline.ts) and a
 * transaction whose BEGIN and COMMIT ride on its statements
 * (src/store/postgres/session.ts, transaction.ts; issue #24), on the real
 * server: results in order, a failure named by its statement with the rest
 * not run, the connection's record of prepared statements kept true, and a
 * connection lost once COMMIT was sent reported as commit_uncertain.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { Pipeline, pipelined, type Statement } from '../../src/store/postgres/pipeline.ts';
import { namingClient, StatementNames } from '../../src/store/postgres/prepared.ts';
import { PgSession } from '../../src/store/postgres/session.ts';
import { readsAhead, runTransaction, type PgTxOps } from '../../src/store/postgres/transaction.ts';
import { PlanMissed, planMissed } from '../../src/store/postgres/failure.ts';
import { pgOps } from '../../src/store/postgres/ops.ts';
import { streamOf } from '../../src/control/scope.ts';
import { PLANNED_FN, PLANNED_FN_SQL } from '../../src/store/tx/rows-sql.ts';
import { tx, type BatchWrites, type Program } from '../../src/store/tx/ops.ts';
import { PgStore } from '../../src/store/postgres/store.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { actor, admission, agentScope, FAR, freshSpace, NOW, publishAgent, publishedChain, taskAdmission } from './support/fixtures.ts';
import { randomIds } from '../../src/records/ids.ts';
import { PG_URL, schemaWithAdmin } from './support/pg.ts';

const TYPES = { getTypeParser: (oid: number, format?: string) => (oid === 20 ? BigInt : pg.types.getTypeParser(oid, format as 'text')) } as pg.CustomTypesConfig;

describe.skipIf(!PG_URL)('postgres: pipelines', () => {
  const schema = schemaWithAdmin(async (admin) => void (await admin.query('CREATE TABLE pipe_notes (id int PRIMARY KEY, note text NOT NULL)')));

  /** One pooled connection sending named statements, so what it prepared is what pg_prepared_statements shows. */
  const onePool = (names: StatementNames) => new pg.Pool({ connectionString: schema.db.url, max: 1, Client: namingClient(names), types: TYPES });
  /** Runs `body` on one pooled client of a fresh {@link onePool}, then ends the pool and empties pipe_notes. */
  const onOneClient = async (body: (client: pg.PoolClient, names: StatementNames) => Promise<void>) => {
    const names = new StatementNames();
    const pool = onePool(names);
    const client = await pool.connect();
    try {
      await body(client, names);
    } finally {
      client.release();
      await pool.end();
      await schema.admin.query('DELETE FROM pipe_notes');
    }
  };
  /** Runs `body` on a store opened on this schema (migrated: the ledger's tables exist), then closes it. */
  const onStore = async (max: number, body: (store: PgStore) => Promise<void>) => {
    const store = await PgStore.open(schema.db.url, { max });
    try {
      await body(store);
    } finally {
      await store.close();
    }
  };
  const prepared = async (client: pg.PoolClient) =>
    (await client.query<{ name: string; statement: string }>("SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'baton_%' ORDER BY name")).rows;

  it('answers each statement in order, with the pool’s type parsers, in one round trip', () =>
    onOneClient(async (client, names) => {
      const results = await pipelined(
        client,
        [{ text: 'SELECT $1::int8 AS n', values: ['9007199254740993'] }, { text: 'INSERT INTO pipe_notes VALUES ($1, $2), ($3, $4)', values: [1, 'a', 2, 'b'] }, { text: 'SELECT note FROM pipe_notes ORDER BY id' }],
        names,
        TYPES,
      );
      expect(results.map((r) => r.rows)).toStrictEqual([[{ n: 9007199254740993n }], [], [{ note: 'a' }, { note: 'b' }]]);
      expect(results[1]!.rowCount).toBe(2);
      // The two parameterised texts were parsed once each, under their names, and are reused as such.
      expect((await prepared(client)).map((p) => p.statement)).toStrictEqual(['SELECT $1::int8 AS n', 'INSERT INTO pipe_notes VALUES ($1, $2), ($3, $4)']);
      expect((await client.query('SELECT $1::int8 AS n', ['7'])).rows).toStrictEqual([{ n: 7n }]);
    }));

  it('fails at the first failing statement, names it, runs none after it, and keeps the prepared-statement record true', () =>
    onOneClient(async (client, names) => {
      const before: Statement = { text: 'SELECT $1::int + 0 AS n', values: [1] };
      const failing: Statement = { text: 'SELECT 1 / $1::int AS n', values: [0] };
      const after: Statement = { text: 'INSERT INTO pipe_notes VALUES ($1, $2)', values: [3, 'never'] };
      const err = await pipelined(client, [before, failing, after], names, TYPES).then(
        () => undefined,
        (e: unknown) => e as { code?: string; statementIndex?: number },
      );
      expect(err).toMatchObject({ code: '22012', statementIndex: 1 });
      expect((await schema.admin.query('SELECT 1 FROM pipe_notes WHERE id = 3')).rowCount).toBe(0);
      // The first text and the failing one were parsed (the failure was in execution), the last one never:
      // each runs again on this connection, which it could not if pg believed a statement prepared that is not.
      expect((await prepared(client)).map((p) => p.statement)).toStrictEqual([before.text, failing.text]);
      const again = await pipelined(client, [before, { ...failing, values: [1] }, after], names, TYPES);
      expect(again.map((r) => r.rows)).toStrictEqual([[{ n: 1 }], [{ n: 1 }], []]);
      expect((await client.query(after.text, [4, 'plain'])).rowCount).toBe(1);
    }));

  it('a session’s BEGIN rides on its first statement, a deferred statement on the next one or on COMMIT; a failed one commits nothing', () =>
    onOneClient(async (client, names) => {
      const sent: unknown[] = [];
      const query = client.query.bind(client) as (...a: unknown[]) => unknown;
      (client as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => (sent.push(a[0]), query(...a));
      const insert = (id: number, note: string): Statement => ({ text: 'INSERT INTO pipe_notes VALUES ($1, $2)', values: [id, note] });
      const ids = async () => (await schema.admin.query<{ id: number }>('SELECT id FROM pipe_notes ORDER BY id')).rows.map((r) => r.id);
      const ok = new PgSession(client, names, TYPES);
      ok.defer(insert(10, 'deferred'));
      // The deferred insert runs before the statement it rides with, in the same transaction.
      expect((await ok.query<{ n: bigint }>('SELECT count(*) AS n FROM pipe_notes')).rows).toStrictEqual([{ n: 1n }]);
      ok.defer(insert(11, 'last'));
      await ok.commit();
      expect(sent).toHaveLength(2);
      expect(ok).toMatchObject({ begun: true, committing: true, committed: true });
      expect(await ids()).toStrictEqual([10, 11]);

      const failed = new PgSession(client, names, TYPES);
      await failed.query(insert(12, 'kept?').text, insert(12, 'kept?').values);
      failed.defer(insert(10, 'duplicate'));
      const err = await failed.commit().then(
        () => undefined,
        (e: unknown) => e as { code?: string; statementIndex?: number },
      );
      expect(err).toMatchObject({ code: '23505', statementIndex: 0 });
      expect(failed.committed).toBe(false);
      await failed.rollback();
      expect(await ids()).toStrictEqual([10, 11]);
      // A session in which nothing ran opens no transaction and commits nothing.
      const idle = new PgSession(client, names, TYPES);
      sent.length = 0;
      await idle.commit();
      await idle.rollback();
      await idle.flush();
      expect(sent).toHaveLength(0);
    }));

  it('a program that refuses after its deferred write has the write sent first: a write that missed its plan replaces the refusal', async () => {
    await schema.admin.query(PLANNED_FN_SQL);
    await onOneClient(async (client, names) => {
      const none: BatchWrites = { nodes: [], balances: [], records: [], contents: [], events: [], heads: [], reservations: [], entries: [], charges: [], work: [], done: [] };
      // A write that checks a plan it met (true) or missed (false), and a program that refuses right after it.
      const run = (met: boolean) => {
        const ops = { plannedWrite: () => ({ text: `SELECT ${PLANNED_FN}($1::boolean) AS planned`, values: [met] }) } as unknown as PgTxOps;
        const program = function* (): Program<never> {
          yield* tx('writeBatch', none);
          throw new Error('refused after the write');
        };
        const session = new PgSession(client, names, TYPES);
        return runTransaction(program, ops, session, true).finally(() => session.rollback());
      };
      await expect(run(true)).rejects.toThrow('refused after the write');
      const missed = await run(false).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(planMissed(missed)).toBe(true);
    });
  });

  it('a new task’s admission is two round trips, and so is its settlement; a replay misses the plan and is answered the plain way', async () => {
    const trips: { texts: string[]; failed?: unknown }[] = [];
    const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
    const orig = proto.query;
    proto.query = function (this: unknown, ...args: unknown[]) {
      const q = args[0];
      const trip: (typeof trips)[number] = { texts: q instanceof Pipeline ? q.statements.map((x) => x.text) : [typeof q === 'string' ? q : String((q as { text?: string }).text)] };
      if (q instanceof Pipeline) q.done.catch((err: unknown) => void (trip.failed = err));
      trips.push(trip);
      return orig.apply(this, args);
    };
    await onStore(2, async (store) => {
      const space = freshSpace();
      await publishAgent(store, space);
      const fence = [...(await store.control.fenceSet([agentScope(space)]))];
      const root = { space_id: space, owner_namespace: `ns-${space}`, actor_ref: actor, at: NOW(), node_id: randomIds.next('dlg'), not_after: FAR, dimensions: [{ name: 'units', unit: 'admission', ceiling: 5n }], preset: { preset_id: randomIds.next('preset'), max_active_roots: 10, max_per_minute: 10 } };
      // One instant for the whole task, as the gateway admits it (its capacity statement's retained count then holds for the admission).
      const req = await taskAdmission(store, space, [root], fence, root.node_id, { at: root.at });
      trips.length = 0;
      const receipt = await store.ledger.admitTask(req);
      expect(receipt).toMatchObject({ status: 'held', replayed: false });
      // Its reads with BEGIN; its preset's lock (limits checked again under it), then its write, with COMMIT.
      expect(trips.map((t) => [t.texts[0], t.texts.at(-1)])).toStrictEqual([
        ['BEGIN', expect.stringMatching(/^SELECT h\.\* FROM control_heads/)],
        [expect.stringMatching(/^SELECT baton_preset_hold\(/), 'COMMIT'],
      ]);
      expect(trips[0]!.texts).toHaveLength(5);
      expect(trips[0]!.texts.some((t) => t.includes('preset_locks')), 'no preset lock in the first round trip').toBe(false);
      expect(trips[1]!.texts[1]).toMatch(/^WITH w0 AS \(INSERT INTO ledger_nodes/);

      // The same request again: its nodes exist, so it asks for its claims where the new streams were read ahead.
      trips.length = 0;
      await expect(store.ledger.admitTask(req)).resolves.toMatchObject({ reservation_id: receipt.reservation_id, replayed: true });
      expect(trips.map((t) => t.texts[0])).toStrictEqual(['BEGIN', 'ROLLBACK', 'BEGIN', expect.stringMatching(/^SELECT \* FROM ledger_reservations/), 'COMMIT']);

      trips.length = 0;
      await store.ledger.settle({ reservation_id: receipt.reservation_id, outcome: { kind: 'not_dispatched' }, at: NOW(), ends_follow: req.admission.effect_id });
      // Its resolution with BEGIN; its write with COMMIT (a verdict's fence read would come between: e2e/statements-suite.ts).
      expect(trips.map((t) => [t.texts[0], t.texts.at(-1)])).toStrictEqual([
        ['BEGIN', expect.stringMatching(/^UPDATE ledger_reservations/)],
        [expect.stringMatching(/^WITH w0 AS \(/), 'COMMIT'],
      ]);
      expect(trips.every((t) => t.failed === undefined)).toBe(true);
    }).finally(() => void (proto.query = orig));
  });

  it('a program that finishes with reads ahead left over misses its plan, and runs again the plain way', async () => {
    await onStore(1, (store) =>
      onOneClient(async (client, names) => {
        const space = freshSpace();
        await publishAgent(store, space);
        const published = streamOf(agentScope(space));
        const absent = streamOf(agentScope(freshSpace()));
        // On the presumed answer (no head) it reads a second stream; on the real one it stops after the first.
        const make = function* (): Program<number> {
          const heads = yield* tx('streamHeads', [published], 'none');
          if (heads.length === 0) yield* tx('streamHeads', [absent], 'none');
          return heads.length;
        };
        expect(readsAhead(make)).toHaveLength(2);
        const session = new PgSession(client, names, TYPES);
        const err = await runTransaction(make, pgOps(session), session, true).then(
          () => undefined,
          (e: unknown) => e,
        );
        await session.rollback();
        expect(err).toBeInstanceOf(PlanMissed);
        expect(planMissed(err)).toBe(true);
        // The plain way, the same program answers.
        const plain = new PgSession(client, names, TYPES);
        await expect(runTransaction(make, pgOps(plain), plain, false)).resolves.toBe(1);
        await plain.commit();
      }),
    );
  });

  it('a connection lost while a write and its COMMIT are in flight is commit_uncertain, never retried', async () => {
    await onStore(2, async (store) => {
      const { space, c } = await publishedChain(store);
      const req = await admission(store, space, [c.root, c.child, c.leaf], c.leaf);
      // Another session inserts the admission's decision revision and holds its transaction open: the admission's
      // write, which inserts that revision with its COMMIT behind it, waits on the unique key.
      await schema.admin.query('BEGIN');
      await schema.admin.query('INSERT INTO records(record_id, revision_id, content_digest, schema_ref, prior_revision, document, stored_at) VALUES ($1, $2, $3, $4, NULL, $5, $6)', [
        'rec_blocker',
        req.decision.revision_id,
        req.decision.content_digest,
        req.decision.schema_ref,
        '{}',
        NOW(),
      ]);
      const admitting = store.ledger.admit(req);
      admitting.catch(() => undefined);
      const waiting = async () => (await schema.admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))')).rows;
      const until = Date.now() + 10_000;
      let blocked = await waiting();
      while (blocked.length === 0) {
        if (Date.now() > until) throw new Error('the admission never waited on the decision revision');
        await new Promise((r) => setTimeout(r, 5));
        blocked = await waiting();
      }
      // Only the write inserts a record: a wait on that session is the write's (pg_stat_activity's query text is not
      // kept current within a pipeline, so it cannot say which statement waits).
      await schema.admin.query('SELECT pg_terminate_backend($1)', [blocked[0]!.pid]);
      const err = await expectCodeAsync(admitting, 'unavailable');
      expect(err.details).toMatchObject({ reason: 'commit_uncertain' });
      await schema.admin.query('ROLLBACK');
      // It did not commit (its backend was ended while waiting), and nothing ran it again.
      expect(await store.ledger.reservation(req.reservation_id)).toBeUndefined();
    }).finally(() => schema.admin.query('ROLLBACK').catch(() => undefined));
  });
});
