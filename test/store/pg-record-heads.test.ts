/**
 * A batch writes its record revisions without reading their heads first
 * (src/store/tx/rows-sql.ts recordParts, issue #24). On PostgreSQL, READ
 * COMMITTED, another writer can move a head after the batch's statement took
 * its snapshot: the revision then fits the head it saw, and only the head's
 * own update, waiting for that writer, finds its prior gone. This holds the
 * other writer's transaction open at exactly that point and checks that the
 * batch is refused `head_moved` and leaves no fork — two revisions naming one
 * prior, the second one the head.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalText } from '../../src/records/canonical.ts';
import { refOf, sealRecord, type Envelope } from '../../src/records/envelope.ts';
import { randomIds } from '../../src/records/ids.ts';
import { systemClock } from '../../src/records/time.ts';
import { PgStore } from '../../src/store/postgres/store.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { actor, admission, chain, freshSpace, NOW, publishAgent } from './support/fixtures.ts';
import { freshSchema, PG_URL } from './support/pg.ts';

const note = (body: Record<string, unknown>, prior?: Envelope) =>
  sealRecord(
    { type: 'permission_decision', body, issuedBy: actor, lifecycle: 'recorded', ...(prior ? { prior: refOf(prior), recordId: prior.record_id } : {}) },
    { ids: randomIds, clock: systemClock },
  );

describe.skipIf(!PG_URL)('postgres: a record head moved under a batch', () => {
  let db: Awaited<ReturnType<typeof freshSchema>>;
  let store: PgStore;
  let other: pg.Client;
  beforeAll(async () => {
    db = await freshSchema();
    store = await PgStore.open(db.url, { max: 4 });
    other = new pg.Client({ connectionString: db.url });
    await other.connect();
  });
  afterAll(async () => {
    await other?.end();
    await store?.close();
    await db?.drop();
  });

  it('a revision written on a head another transaction moves before it commits is refused head_moved, and no fork is left', async () => {
    const space = freshSpace();
    await publishAgent(store, space);
    const c = await chain(store, space);
    const req = await admission(store, space, [c.root, c.child, c.leaf], c.leaf, { units: 1n });
    await store.ledger.admit(req);
    const r1 = note({ effect_id: req.effect_id, decision: 'allow' });
    expect(await store.putRecord(r1)).toBe('inserted');

    // The other writer revises r1 and holds its transaction open: its head row stays locked.
    const theirs = note({ effect_id: req.effect_id, decision: 'theirs' }, r1);
    const otherPid = Number((await other.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
    await other.query('BEGIN');
    await other.query(
      'INSERT INTO records(record_id, revision_id, content_digest, schema_ref, prior_revision, document, stored_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [theirs.record_id, theirs.revision_id, theirs.content_digest, theirs.schema_ref, r1.revision_id, canonicalText(theirs), NOW()],
    );
    await other.query('UPDATE record_heads SET revision_id = $1 WHERE record_id = $2', [theirs.revision_id, r1.record_id]);

    // Ours names r1 too, and rides on a settlement: its snapshot still shows r1 as the head.
    const ours = note({ effect_id: req.effect_id, decision: 'ours' }, r1);
    const settling = store.ledger.settle({ reservation_id: req.reservation_id, outcome: { kind: 'unknown' }, at: NOW(), records: [ours] });
    settling.catch(() => undefined);
    // Until the settlement's statement waits on the other writer's row lock (bounded: 10 s).
    const blocked = async () =>
      Number((await other.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [otherPid])).rows[0]!.n) > 0;
    const until = Date.now() + 10_000;
    while (!(await blocked())) {
      if (Date.now() > until) throw new Error('the settlement never waited on the head row');
      await new Promise((r) => setTimeout(r, 5));
    }
    await other.query('COMMIT');

    const err = await expectCodeAsync(settling, 'invalid_request');
    expect(err.details).toStrictEqual({ conflict: 'head_moved' });
    const heads = await other.query<{ revision_id: string }>('SELECT revision_id FROM record_heads WHERE record_id = $1', [r1.record_id]);
    expect(heads.rows.map((r) => r.revision_id)).toStrictEqual([theirs.revision_id]);
    const revisions = await other.query<{ revision_id: string }>('SELECT revision_id FROM records WHERE record_id = $1 ORDER BY seq', [r1.record_id]);
    expect(revisions.rows.map((r) => r.revision_id)).toStrictEqual([r1.revision_id, theirs.revision_id]);
    // Nothing of the settlement stayed: the reservation is still held.
    expect((await store.ledger.reservation(req.reservation_id))?.status).toBe('held');
  });
});
