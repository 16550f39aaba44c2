/**
 * What a ledger operation digests before its transaction (src/ledger/prepare.ts,
 * DESIGN "A turn is a pure plan, then one commit": no canonicalisation or
 * hashing while the write lock is held), on real SQLite: a task's admission
 * and its verdict compute no SHA-256 digest between BEGIN and COMMIT; their
 * audit events are the ones composed before, chained on the heads there are;
 * where another writer moved the attempt stream in between, the verdict's
 * events are composed again in the transaction on the head it finds, never
 * written on the stale one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventDigest } from '../../src/control/event.ts';
import { streamOf, type ControlScopeRef } from '../../src/control/scope.ts';
import { planEvents, prepareAdmission, prepareSettlement, rideAlongEvents } from '../../src/ledger/prepare.ts';
import type { SettlementRequest } from '../../src/ledger/types.ts';
import { randomIds, sequentialIds } from '../../src/records/ids.ts';
import { LastHeads } from '../../src/store/compose.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { TxBatch } from '../../src/store/tx/batch.ts';
import { countHashes } from '../helpers/hash-tally.ts';
import { countSqlite } from '../helpers/sql-tally.ts';
import { expectCodeAsync } from '../helpers/errors.ts';
import { actor, agentScope, attemptScope, decision, FAR, freshSpace, NOW, publishAgent, taskAdmission } from '../store/support/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-prepare-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

async function world() {
  const store = SqliteStore.open(join(dir, `p${++n}.db`), { create: true });
  const space = freshSpace();
  await publishAgent(store, space);
  const root = { space_id: space, owner_namespace: `ns-${space}`, actor_ref: actor, at: NOW(), node_id: randomIds.next('dlg'), not_after: FAR, dimensions: [{ name: 'units', unit: 'admission', ceiling: 5n }] };
  const task = await taskAdmission(store, space, [root], [...(await store.control.fenceSet([agentScope(space)]))], root.node_id, {
    follow: { attempt_id: randomIds.next('att'), lease_owner: 'node_test', lease_until: NOW(), deadline: FAR },
  });
  const started = { event_type: 'rw003.execution.started', control_scope_ref: task.admission.attempt_scope, actor_ref: actor, payload: { step: 'started' } } as const;
  return { store, space, task: { ...task, admission: { ...task.admission, events: [started] } } };
}

const terminal = (scope: ControlScopeRef, step: string) => ({ event_type: 'rw003.execution.terminal' as const, control_scope_ref: scope, actor_ref: actor, payload: { step } });
const verdict = (reservation_id: string, scope: ControlScopeRef): SettlementRequest => ({
  reservation_id,
  outcome: { kind: 'measured', actual: new Map([['units', 1n]]) },
  at: NOW(),
  events: [terminal(scope, 'closed')],
});

/** SHA-256 digests computed while a write transaction of this worker is open, during `run`. */
async function underLock<T>(run: () => Promise<T>): Promise<{ value: T; digests: number }> {
  const sql = countSqlite();
  const hashes = countHashes(() => sql.tally.inWrite);
  try {
    const value = await run();
    return { value, digests: hashes.count };
  } finally {
    hashes.restore();
    sql.restore();
  }
}

describe('a ledger operation prepared before its transaction', () => {
  it('a task\'s admission and its verdict compute no digest under the lock, and chain their audit events as prepared', async () => {
    const w = await world();
    const admitted = await underLock(() => w.store.ledger.admitTask(w.task));
    expect(admitted.value).toMatchObject({ status: 'held', replayed: false });
    expect(admitted.digests).toBe(0);
    const settled = await underLock(() => w.store.ledger.settle(verdict(w.task.admission.reservation_id, w.task.admission.attempt_scope)));
    expect(settled.value.status).toBe('settled');
    expect(settled.digests).toBe(0);
    const events = await w.store.control.readStream(streamOf(w.task.admission.attempt_scope));
    expect(events.map((e) => [e.position, e.event_type])).toStrictEqual([
      [1, 'rw003.permission.evaluated'],
      [2, 'rw003.execution.started'],
      [3, 'rw003.execution.terminal'],
    ]);
    for (const [i, e] of events.entries()) {
      expect(e.prev_event_digest).toBe(i === 0 ? null : events[i - 1]!.event_digest);
      expect(eventDigest(e)).toBe(e.event_digest);
    }
    await w.store.close();
  });

  it('where another writer appended to the attempt stream since, the verdict composes its event on that head, in the transaction', async () => {
    const w = await world();
    await w.store.ledger.admitTask(w.task);
    const scope = w.task.admission.attempt_scope;
    // Another writer (here: not through this store's ledger, so its head is not the one the verdict expects).
    const between = await w.store.control.appendControl({ event_type: 'rw003.execution.checkpointed', control_scope_ref: scope, actor_ref: actor, payload: { step: 'between' } });
    expect(between.position).toBe(3);
    const settled = await underLock(() => w.store.ledger.settle(verdict(w.task.admission.reservation_id, scope)));
    expect(settled.value.status).toBe('settled');
    // Composed here: an input digest and an event digest.
    expect(settled.digests).toBe(2);
    const events = await w.store.control.readStream(streamOf(scope));
    expect(events.map((e) => e.position)).toStrictEqual([1, 2, 3, 4]);
    expect(events[3]).toMatchObject({ event_type: 'rw003.execution.terminal', prev_event_digest: between.event_digest });
    expect(eventDigest(events[3]!)).toBe(events[3]!.event_digest);
    await w.store.close();
  });

  it('an admission replayed computes its request digest before the transaction too, and still tells a replay from a reuse', async () => {
    const w = await world();
    await w.store.ledger.admitTask(w.task);
    const again = await underLock(() => w.store.ledger.admitTask(w.task));
    expect(again.value.replayed).toBe(true);
    expect(again.digests).toBe(0);
    const reused = { ...w.task, admission: { ...w.task.admission, amounts: { units: 2n } } };
    await expectCodeAsync(() => w.store.ledger.admitTask(reused), 'invalid_request');
    await w.store.close();
  });
});

describe('events planned before the transaction', () => {
  const space = 'space_plan';
  const scope = attemptScope(space, 'att_1');
  const ids = sequentialIds('p');

  it('chain one after another on the expected head, as the transaction would', () => {
    const base = { project_id: streamOf(scope).project_id, branch_id: streamOf(scope).branch_id, scope_kind: 'attempt', position: 7, event_id: 'evt_7', event_digest: `sha256:${'7'.repeat(64)}`, state: 'unresolved' };
    const planned = planEvents(rideAlongEvents([terminal(scope, 'a'), terminal(scope, 'b')]), () => base, NOW(), ids)!;
    expect(planned.base).toBe(base);
    expect(planned.composed.map((c) => c.event.position)).toStrictEqual([8, 9]);
    expect(planned.composed[0]!.event.prev_event_digest).toBe(base.event_digest);
    expect(planned.composed[1]!.event.prev_event_digest).toBe(planned.composed[0]!.event.event_digest);
    expect(planned.composed[1]!.headRow).toMatchObject({ position: 9, event_id: planned.composed[1]!.event.event_id });
  });

  it('none planned: nothing is appended, and no head is read', () => {
    expect(new TxBatch(ids).appendPlanned([], undefined).next()).toStrictEqual({ done: true, value: [] });
  });

  it('are not planned across two streams, nor where an event may not ride along (the transaction refuses it)', () => {
    const other = attemptScope(space, 'att_2');
    expect(planEvents(rideAlongEvents([terminal(scope, 'a'), terminal(other, 'b')]), () => undefined, NOW(), ids)).toBeUndefined();
    expect(planEvents([], () => undefined, NOW(), ids)).toBeUndefined();
    const onAuthority = { ...terminal(agentScope(space), 'x') };
    expect(prepareSettlement({ reservation_id: 'res_1', outcome: { kind: 'unknown' }, at: NOW(), events: [onAuthority] }, () => undefined, ids)).toStrictEqual({});
    const admission = { effect_id: 'eff_1', reservation_id: 'res_1', node_id: 'dlg_1', kind: 'reserve' as const, amounts: { units: 1n }, fence_set: [], scopes: [], decision: decision('eff_1'), attempt_scope: scope, actor_ref: actor, at: NOW(), events: [onAuthority] };
    const prepared = prepareAdmission(admission, () => undefined, ids);
    expect(prepared.events).toBeUndefined();
    expect(prepared.admission).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});

describe('the heads a store expects its audit streams to have', () => {
  const head = (i: number) => ({ project_id: 'space_h', branch_id: `attempt:att_${i}`, scope_kind: 'attempt', position: i, event_id: `evt_${i}`, event_digest: `sha256:${String(i % 10).repeat(64)}`, state: 'unresolved' });
  const prep = (i: number) => ({ events: { base: undefined, composed: [{ headRow: head(i) } as never] } });

  it('are the last each committed operation left, and the oldest are forgotten past the bound', () => {
    const last = new LastHeads(2);
    last.committed(prep(1));
    last.committed(prep(2));
    expect(last.expected(head(1))).toStrictEqual(head(1));
    last.committed(prep(1)); // used again: now the newest
    last.committed(prep(3));
    expect(last.expected(head(2))).toBeUndefined();
    expect(last.expected(head(1))).toStrictEqual(head(1));
    expect(last.expected(head(3))).toStrictEqual(head(3));
    last.committed({});
    expect(last.expected(head(3))).toStrictEqual(head(3));
  });
});
