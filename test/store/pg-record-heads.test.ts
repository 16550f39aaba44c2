/**
 * On PostgreSQL a batch writes its record revisions without reading their
 * heads first (src/store/tx/rows-sql.ts recordParts, issue #24): the insert
 * writes a revision only where it fits its head, and a revision that does not
 * is left to the single-row rules, which refuse it by name. READ COMMITTED
 * also lets another writer move a head after the batch's statement took its
 * snapshot: the revision then fits the head it saw, and only the head's own
 * update, waiting for that writer, finds its prior gone. One test holds the
 * other writer's transaction open at exactly that point and checks that the
 * batch is refused `head_moved` and leaves no fork — two revisions naming one
 * prior, the second one the head. That batch's COMMIT rides with its write
 * (src/store/postgres/transaction.ts), so it also shows that the write's check
 * of its plan keeps the COMMIT from committing what was not planned.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { canonicalText } from '../../src/records/canonical.ts';
import { refOf, sealRecord, type Envelope } from '../../src/records/envelope.ts';
import { randomIds } from '../../src/records/ids.ts';
import { systemClock } from '../../src/records/time.ts';
import { Pipeline } from '../../src/store/postgres/pipeline.ts';
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

  const held = async () => {
    const space = freshSpace();
    await publishAgent(store, space);
    const c = await chain(store, space);
    const req = await admission(store, space, [c.root, c.child, c.leaf], c.leaf, { units: 1n });
    await store.ledger.admit(req);
    return req;
  };
  /** The failures of this worker's pipelines (src/store/postgres/pipeline.ts) from now until the test ends. */
  const pipelineFailures = (): unknown[] => {
    const out: unknown[] = [];
    const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
    const orig = proto.query;
    proto.query = function (this: unknown, ...args: unknown[]) {
      if (args[0] instanceof Pipeline) args[0].done.catch((err: unknown) => out.push(err));
      return orig.apply(this, args);
    };
    onTestFinished(() => void (proto.query = orig));
    return out;
  };
  const headOf = async (recordId: string) => (await other.query<{ revision_id: string }>('SELECT revision_id FROM record_heads WHERE record_id = $1', [recordId])).rows[0]?.revision_id;

  it('plain revisions are written; one that does not name the head exactly is refused by the single-row rules, by name', async () => {
    const req = await held();
    const settle = (records: Envelope[]) => store.ledger.settle({ reservation_id: req.reservation_id, outcome: { kind: 'unknown' }, at: NOW(), records });
    const r1 = note({ effect_id: req.effect_id, decision: 'allow' });
    const r2 = note({ effect_id: req.effect_id, decision: 'deny' }, r1);
    await settle([r1]);
    await settle([r2]);
    expect(await headOf(r1.record_id)).toBe(r2.revision_id);
    const refused = async (record: Envelope) => {
      const err = await expectCodeAsync(settle([record]), 'invalid_request');
      expect(await headOf(r1.record_id)).toBe(r2.revision_id);
      return [err.message, err.details];
    };
    const base = { type: 'permission_decision' as const, body: { effect_id: req.effect_id, decision: 'x' }, issuedBy: actor, lifecycle: 'recorded' as const, recordId: r1.record_id };
    const deps = { ids: randomIds, clock: systemClock };
    // A fork from the old head; the head's digest under another revision id; the head's revision id with another digest.
    expect(await refused(note({ effect_id: req.effect_id, decision: 'fork' }, r1))).toStrictEqual(['a new revision must name the current head as its prior revision', { record_id: r1.record_id, conflict: 'head_moved' }]);
    const wrongRev = sealRecord({ ...base, prior: { ...refOf(r2), revision_id: r1.revision_id } }, deps);
    expect(await refused(wrongRev)).toStrictEqual(['a new revision must name the current head as its prior revision', { record_id: r1.record_id, conflict: 'head_moved' }]);
    const wrongDigest = sealRecord({ ...base, prior: { ...refOf(r2), content_digest: r1.content_digest } }, deps);
    expect(await refused(wrongDigest)).toStrictEqual(['prior revision digest does not match the current head', { record_id: r1.record_id }]);
    // A first revision of a record that has one; a new record naming a prior that never existed.
    let firstId = true;
    const sameId = { next: (prefix: string) => (firstId ? ((firstId = false), r1.record_id) : randomIds.next(prefix)) };
    const noPrior = sealRecord({ type: 'permission_decision', body: { effect_id: req.effect_id, decision: 'again' }, issuedBy: actor, lifecycle: 'recorded' }, { ids: sameId as typeof randomIds, clock: systemClock });
    expect(noPrior.record_id).toBe(r1.record_id);
    expect(await refused(noPrior)).toStrictEqual(['a new revision must name the current head as its prior revision', { record_id: r1.record_id, conflict: 'head_moved' }]);
    const orphan = sealRecord({ ...base, recordId: 'dec_never', prior: { object_id: 'dec_never', revision_id: 'rev_never', content_digest: r1.content_digest } }, deps);
    const err = await expectCodeAsync(settle([orphan]), 'invalid_request');
    expect([err.message, err.details]).toStrictEqual(['prior revision is unknown', { record_id: 'dec_never' }]);
    expect(await headOf('dec_never')).toBeUndefined();
    // A replay of the head: nothing new, nothing refused.
    await settle([r2]);
    expect((await other.query('SELECT 1 FROM records WHERE record_id = $1', [r1.record_id])).rowCount).toBe(2);
  });

  it('a revision written on a head another transaction moves before it commits is refused head_moved, and no fork is left', async () => {
    const req = await held();
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
    const missed = pipelineFailures();
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

    // The settlement's write, with its COMMIT behind it, found the head moved: it missed its plan, committed nothing,
    // and the settlement ran again the plain way, whose snapshot shows their head: the single-row rules refuse ours.
    const err = await expectCodeAsync(settling, 'invalid_request');
    expect(err.details).toStrictEqual({ record_id: r1.record_id, conflict: 'head_moved' });
    expect(missed.map((e) => (e as { code?: string }).code)).toStrictEqual(['BT001']);
    expect(await headOf(r1.record_id)).toBe(theirs.revision_id);
    const revisions = await other.query<{ revision_id: string }>('SELECT revision_id FROM records WHERE record_id = $1 ORDER BY seq', [r1.record_id]);
    expect(revisions.rows.map((r) => r.revision_id)).toStrictEqual([r1.revision_id, theirs.revision_id]);
    // Nothing of the settlement stayed: the reservation is still held.
    expect((await store.ledger.reservation(req.reservation_id))?.status).toBe('held');
  });
});
