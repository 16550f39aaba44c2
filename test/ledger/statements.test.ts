/**
 * Statements the ledger's programs no longer spend (issue #24), on SQLite and
 * counted: a new task's admission learns that its effect and reservation ids
 * are free from its root's capacity statement instead of reading its claims
 * (TxBatch.expectClaims); a verdict ends its effect's follow-up in the
 * statement that resolves the reservation (work-sql.ts migration 20) instead
 * of deleting the work row itself — which a settlement still does where the
 * resolution cannot have (another effect named, a reservation resolved from
 * unknown); an admission reads the heads it fences and the head of the audit
 * stream it appends to in one statement.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { randomIds } from '../../src/records/ids.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { TxBatch } from '../../src/store/tx/batch.ts';
import { countSqlite, type SqlTally } from '../helpers/sql-tally.ts';
import { actor, admission, chain, freshSpace, NOW, presetTask, publishAgent } from '../store/support/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-ledger-statements-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const preset = () => ({ preset_id: randomIds.next('preset'), max_active_roots: 100, max_per_minute: 1000 });
const ran = (tally: SqlTally, prefix: string) => [...tally.byText].filter(([sql]) => sql.startsWith(prefix)).reduce((k, [, v]) => k + v, 0);
const CLAIMS_READ = 'SELECT * FROM ledger_reservations WHERE effect_id = ? OR reservation_id = ?';
const WORK_DELETE = 'DELETE FROM attempt_work';

async function opened() {
  const store = SqliteStore.open(join(dir, `c${++n}.db`), { create: true });
  const space = freshSpace();
  await publishAgent(store, space);
  return { store, space };
}

async function counted<T>(run: () => Promise<T>): Promise<{ value: T; tally: SqlTally }> {
  const counting = countSqlite();
  try {
    return { value: await run(), tally: counting.tally };
  } finally {
    counting.restore();
  }
}

describe('a new task\'s claims', () => {
  it('are counted by its root\'s capacity statement: no read of its own, and none after', async () => {
    const { store, space } = await opened();
    try {
      const { value, tally } = await counted(() => presetTask(store, space, preset()).run());
      expect(value).toMatchObject({ status: 'held', replayed: false });
      expect(ran(tally, CLAIMS_READ)).toBe(0);
      expect([...tally.byText.keys()].filter((sql) => sql.includes('AS claimed'))).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it('a batch takes them as free only for the ids its capacity statement counted, and only when none was held', () => {
    const a = { effect_id: 'eff_a', reservation_id: 'res_a' };
    const batch = new TxBatch(randomIds);
    expect(batch.claimsToCount()).toBeUndefined();
    batch.expectClaims(a);
    expect(batch.claimsFree(a)).toBe(false);
    expect(batch.claimsToCount()).toStrictEqual(a);
    batch.noteClaimed(a, 0);
    expect(batch.claimsToCount(), 'counted once').toBeUndefined();
    expect([batch.claimsFree(a), batch.claimsFree({ ...a, effect_id: 'eff_b' }), batch.claimsFree({ ...a, reservation_id: 'res_b' })]).toStrictEqual([true, false, false]);
    batch.noteClaimed(a, 1);
    expect(batch.claimsFree(a)).toBe(false);
  });
});

describe('the end of a follow-up', () => {
  it('a verdict resolving its own held reservation deletes no work row itself: the resolution ended it', async () => {
    const { store, space } = await opened();
    try {
      const t = presetTask(store, space, preset());
      const r = await t.run();
      expect(await store.work.get(t.effect)).toMatchObject({ effect_id: t.effect });
      const { tally } = await counted(() => store.ledger.settle({ reservation_id: r.reservation_id, outcome: { kind: 'not_dispatched' }, at: NOW(), ends_follow: t.effect }));
      expect(ran(tally, WORK_DELETE)).toBe(0);
      expect(await store.work.get(t.effect)).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('is still written where the resolution cannot have ended it: another effect named, a reservation resolved from unknown', async () => {
    const { store, space } = await opened();
    try {
      const [a, b] = [presetTask(store, space, preset()), presetTask(store, space, preset())];
      const ra = await a.run();
      await b.run();
      const other = await counted(() => store.ledger.settle({ reservation_id: ra.reservation_id, outcome: { kind: 'unknown' }, at: NOW(), ends_follow: b.effect }));
      expect(ran(other.tally, WORK_DELETE)).toBe(1);
      expect([await store.work.get(a.effect), await store.work.get(b.effect)]).toStrictEqual([undefined, undefined]);
      // A work row for an effect whose reservation is unknown (put back by hand: the verdict that made it unknown ended it).
      store.handle
        .prepare('INSERT INTO attempt_work(effect_id, attempt_id, reservation_id, lease_owner, lease_until, tries, deadline, created_at) VALUES (?, ?, ?, NULL, ?, 0, ?, ?)')
        .run(a.effect, 'att_x', ra.reservation_id, NOW(), NOW(), NOW());
      const evidence = { object_id: 'rec_evidence', revision_id: 'rev_evidence', content_digest: actor.content_digest };
      const fromUnknown = await counted(() => store.ledger.settle({ reservation_id: ra.reservation_id, outcome: { kind: 'not_dispatched' }, evidence, at: NOW(), ends_follow: a.effect }));
      expect(fromUnknown.value).toMatchObject({ status: 'released' });
      expect(ran(fromUnknown.tally, WORK_DELETE)).toBe(1);
      expect(await store.work.get(a.effect)).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});

describe('an admission\'s heads', () => {
  it('the fenced ones and the audit stream\'s are read in one statement, on a stored chain', async () => {
    const { store, space } = await opened();
    try {
      const c = await chain(store, space);
      const req = await admission(store, space, [c.root, c.child, c.leaf], c.leaf);
      const { value, tally } = await counted(() => store.ledger.admit(req));
      expect(value).toMatchObject({ status: 'held', replayed: false });
      expect(ran(tally, 'SELECT h.* FROM (VALUES')).toBe(1);
      expect(tally.statements).toBe(9);
    } finally {
      await store.close();
    }
  });
});
