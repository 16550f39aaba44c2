/**
 * Two verdicts for one turn racing on different nodes (a stream seeing the
 * terminal state here, a revocation sweep's read-back there): the ledger's
 * resolve-once rule lets one settle; the other must not surface as an error
 * after the effect (issue: "a conflict after dispatch is reported as the
 * uncertain outcome it is, never as invalid_request").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-node';
import { afterAll, describe, expect, it } from 'vitest';
import { TracingConfig } from '../../../src/telemetry/config.ts';
import { startTracing } from '../../../src/telemetry/tracing.ts';
import type { AttemptBody } from '../../../src/attempts/record.ts';
import { AttemptRepository, type Attempt } from '../../../src/gateway/attempts.ts';
import { PathEvents } from '../../../src/gateway/path/events.ts';
import type { Turn } from '../../../src/gateway/path/turn.ts';
import { NOT_SHOWN, verdict, verdictInterrupted, verdictReleased } from '../../../src/gateway/path/verify.ts';
import { fingerprint } from '../../../src/attempts/task-view.ts';
import { schemaRefFor } from '../../../src/records/schema-ref.ts';
import { RemoteClient } from '../../../src/gateway/remote.ts';
import { refOf, sealRecord } from '../../../src/records/envelope.ts';
import { randomIds } from '../../../src/records/ids.ts';
import { systemClock } from '../../../src/records/time.ts';
import type { JsonValue } from '../../../src/records/strict-json.ts';
import type { Store } from '../../../src/store/port.ts';
import { SqliteStore } from '../../../src/store/sqlite/store.ts';
import { actor, agentScope, freshSpace, NOW, presetTask, publishAgent } from '../../store/support/fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'baton-verdict-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The store as the losing node saw it: the reservation still held in its first reads, settled by the other node meanwhile. */
function staleReads(store: Store, reads: number): Store {
  let left = reads;
  const ledger = new Proxy(store.ledger, {
    get(target, prop) {
      if (prop !== 'reservation') return Reflect.get(target, prop, target);
      return async (id: string) => {
        const r = await target.reservation(id);
        return r && left-- > 0 ? { ...r, status: 'held' as const, settled_at: null } : r;
      };
    },
  });
  return new Proxy(store, { get: (target, prop) => (prop === 'ledger' ? ledger : Reflect.get(target, prop, target)) });
}

/** An admitted turn on a fresh store: its reservation held, its attempt dispatching. */
async function admittedTurn(file: string, followUp?: Turn['followUp']) {
  const store = SqliteStore.open(join(dir, file), { create: true });
  const space = freshSpace();
  await publishAgent(store, space);
  const task = presetTask(store, space, { preset_id: 'p', max_active_roots: 10, max_per_minute: 100 });
  const receipt = await task.run();
  const attemptId = randomIds.next('att');
  const body: AttemptBody = {
    attempt_id: attemptId,
    space_id: space,
    delegatee_id: 'agent',
    delegation_ref: { object_id: task.root, revision_id: 'rev_x', content_digest: `sha256:${'c'.repeat(64)}` },
    root_ref: { object_id: task.root, revision_id: 'rev_x', content_digest: `sha256:${'c'.repeat(64)}` },
    caller_id: 'planner',
    effect_id: task.effect,
    reservation_id: receipt.reservation_id,
    fence_set: [],
    remote: { endpoint: 'http://127.0.0.1:9/a2a', protocol: 'a2a', protocol_version: '1.0', binding: 'JSONRPC', card_ref: actor, extensions: [] },
    context_id: 'ctx_1',
    idempotency_key: task.effect,
    state: 'dispatching',
  };
  const attempt = sealRecord<AttemptBody>({ type: 'execution_attempt', issuedBy: actor, lifecycle: 'active', body }, { ids: { next: (p) => (p === 'rev' ? randomIds.next('rev') : attemptId) }, clock: systemClock }) as Attempt;
  await store.putRecord(attempt);
  const turn: Turn = {
    attempt,
    effect_id: task.effect,
    reservation_id: receipt.reservation_id,
    fence_set: [],
    scopes: [],
    target: { delegatee_id: 'agent', endpoint: 'http://127.0.0.1:9/a2a', headers: {}, acceptance: {}, streaming: false, pushNotifications: false, chainPlacement: 'request' },
    ...(followUp ? { followUp } : {}),
  };
  return { store, attempt, attemptId, turn, reservationId: receipt.reservation_id, effect: task.effect, amounts: receipt.amounts, space };
}

/** A turn's end as the store holds it: its reservation's status, its follow-up ended, its attempt revised once. */
async function expectEnded(store: Store, t: { reservationId: string; effect: string; attemptId: string }, status: string): Promise<void> {
  expect((await store.ledger.reservation(t.reservationId))?.status).toBe(status);
  expect(await store.work.get(t.effect)).toBeUndefined();
  expect((await store.listRevisions(t.attemptId)).length).toBe(2);
}

/** Counts the store's reads of reservations and of control heads (the verdict of a turn admitted here makes none). */
function countingReads(store: Store): { store: Store; reads: () => number } {
  let n = 0;
  const counting = <T extends object>(part: T, method: string): T =>
    new Proxy(part, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target) as unknown;
        return prop === method && typeof v === 'function' ? (...a: unknown[]) => (n++, (v as (...x: unknown[]) => unknown).apply(target, a)) : v;
      },
    });
  const ledger = counting(store.ledger, 'reservation');
  const control = counting(store.control, 'heads');
  return { store: new Proxy(store, { get: (target, prop) => (prop === 'ledger' ? ledger : prop === 'control' ? control : Reflect.get(target, prop, target)) }), reads: () => n };
}

const depsOn = (store: Store, remote: RemoteClient) => ({ store, attempts: new AttemptRepository({ store, clock: systemClock, ids: randomIds, gatewayActor: actor }), remote, clock: systemClock, ids: randomIds, gatewayActor: actor, events: new PathEvents() });

describe('a verdict that loses the race to another node', () => {
  it('is no error: the other settlement stands, the attempt is closed once, the follow-up ends', async () => {
    const { store, attempt, attemptId, turn, reservationId, effect } = await admittedTurn('v.db');
    // The other node's verdict: consumed, with its own evidence.
    await store.ledger.settle({ reservation_id: reservationId, outcome: { kind: 'measured', actual: new Map([['units', 1n]]) }, evidence: refOf(attempt), at: NOW() });

    // The verdict reads the reservation once before it settles (its judgement's read serves the commit).
    const remote = new RemoteClient();
    const closed = await verdict(depsOn(staleReads(store, 1), remote), turn, { kind: 'lost', reason: 'the stream broke' });
    expect(closed.body).toMatchObject({ state: 'closed', outcome: 'unknown' });
    expect((await store.ledger.reservation(reservationId))?.status).toBe('settled');
    expect(await store.work.get(effect)).toBeUndefined();
    expect((await store.listRevisions(attemptId)).length).toBe(2);
    await remote.close();
    await store.close();
  });
});

describe('a verdict after an unknown one (a node that lost the lease polls on, issue #25 item 2)', () => {
  it('does not overturn it: only reconciliation settles an uncertain effect (ADR-0014)', async () => {
    const { store, attemptId, turn, reservationId } = await admittedTurn('unknown.db');
    // The first verdict: the deadline passed, the effect is unknown and held.
    await store.ledger.settle({ reservation_id: reservationId, outcome: { kind: 'unknown' }, at: NOW() });
    const remote = new RemoteClient();
    const task = { id: 'remote-task', status: { state: 'TASK_STATE_COMPLETED' }, artifacts: [{ artifactId: 'a', parts: [] }] };
    await verdict(depsOn(store, remote), turn, { kind: 'task', task, fingerprint: fingerprint(task) }, task);
    expect((await store.ledger.reservation(reservationId))?.status).toBe('unknown');
    expect((await store.listRevisions(attemptId)).length).toBe(1);
    await remote.close();
    await store.close();
  });
});

describe("a follow-up's verdict on another turn's result (issue #25 item 2)", () => {
  const completed = (history: JsonValue[]) => ({ id: 'remote-task', status: { state: 'TASK_STATE_COMPLETED' }, artifacts: [{ artifactId: 'a', parts: [] }], history });

  it('holds its own reservation unknown with a receipt saying why, and leaves the attempt to the turn whose result it is', async () => {
    const { store, attemptId, turn, reservationId, effect } = await admittedTurn('foreign.db', { messageId: 'msg-mine', delivered: false });
    const remote = new RemoteClient();
    const task = completed([{ messageId: 'msg-other', role: 'ROLE_USER', parts: [] }]);
    const after = await verdict(depsOn(store, remote), turn, { kind: 'task', task, fingerprint: fingerprint(task) }, task);
    // Not revised: no outcome of this turn is projected onto the task.
    expect(after.body).toMatchObject({ state: 'dispatching' });
    expect(after.body.outcome).toBeUndefined();
    expect((await store.listRevisions(attemptId)).length).toBe(1);
    expect((await store.ledger.reservation(reservationId))?.status).toBe('unknown');
    expect(await store.work.get(effect)).toBeUndefined();
    const receipts = (await store.listCurrent(schemaRefFor('verification_receipt'), { limit: 100 })).records.filter((r) => r.body.effect_id === effect);
    expect(receipts.map((r) => r.body)).toEqual([expect.objectContaining({ outcome: 'unknown', reasons: [`lost after transmission: ${NOT_SHOWN}`], follow_up: { message_id: 'msg-mine', delivered: false } })]);
    await remote.close();
    await store.close();
  });

  it('judges the task when its history shows the turn\'s message (the read-back decides from there)', async () => {
    const { store, attemptId, turn } = await admittedTurn('mine.db', { messageId: 'msg-mine', delivered: false });
    const remote = new RemoteClient();
    const task = completed([{ messageId: 'msg-mine', role: 'ROLE_USER', parts: [] }]);
    const after = await verdict(depsOn(store, remote), turn, { kind: 'task', task, fingerprint: fingerprint(task) }, task);
    // Judged as this turn's: the attempt closes (unknown only because the read-back has no agent to reach here).
    expect(after.body).toMatchObject({ state: 'closed', outcome: 'unknown' });
    expect(turn.followUp?.delivered).toBe(true);
    expect((await store.listRevisions(attemptId)).length).toBe(2);
    await remote.close();
    await store.close();
  });
});

describe('two verdicts for one turn in one process (a stream and a poll seeing the same end)', () => {
  it('take turns: the second finds the first one\'s verdict, one receipt and one closing revision are written', async () => {
    const { store, attemptId, turn, reservationId, effect } = await admittedTurn('twice.db');
    const remote = new RemoteClient();
    const deps = depsOn(store, remote);
    const [a, b] = await Promise.all([
      verdict(deps, turn, { kind: 'lost', reason: 'the stream broke' }),
      verdict(deps, turn, { kind: 'lost', reason: 'the poll gave up' }),
    ]);
    expect(b.revision_id).toBe(a.revision_id);
    expect(a.body).toMatchObject({ state: 'closed', outcome: 'unknown' });
    expect((await store.listRevisions(attemptId)).length).toBe(2);
    const receipts = (await store.listCurrent(schemaRefFor('verification_receipt'), { limit: 100 })).records.filter((r) => r.body.effect_id === effect);
    expect(receipts.length).toBe(1);
    expect((await store.ledger.reservation(reservationId))?.status).toBe('unknown');
    await remote.close();
    await store.close();
  });
});

describe('the verdict of a turn admitted in this process (issue #24: no pre-reads)', () => {
  const completed = { id: 'remote-task', status: { state: 'TASK_STATE_COMPLETED' }, artifacts: [{ artifactId: 'a', parts: [] }] };

  it('reads no reservation: it settles the one its admission left held', async () => {
    const t = await admittedTurn('own.db');
    const counted = countingReads(t.store);
    const remote = new RemoteClient();
    const closed = await verdict(depsOn(counted.store, remote), { ...t.turn, reserved: { amounts: t.amounts } }, { kind: 'lost', reason: 'the stream broke' });
    expect(counted.reads()).toBe(0);
    expect(closed.body).toMatchObject({ state: 'closed', outcome: 'unknown' });
    await expectEnded(t.store, t, 'unknown');
    await remote.close();
    await t.store.close();
  });

  it('another node settled it meanwhile: no error, that settlement stands, the attempt is closed once', async () => {
    const t = await admittedTurn('own-lost.db');
    await t.store.ledger.settle({ reservation_id: t.reservationId, outcome: { kind: 'measured', actual: new Map([['units', 1n]]) }, evidence: refOf(t.attempt), at: NOW() });
    const remote = new RemoteClient();
    const closed = await verdict(depsOn(t.store, remote), { ...t.turn, reserved: { amounts: t.amounts } }, { kind: 'lost', reason: 'the stream broke' });
    expect(closed.body).toMatchObject({ state: 'closed', outcome: 'unknown' });
    await expectEnded(t.store, t, 'settled');
    await remote.close();
    await t.store.close();
  });

  it('an interrupted turn consumes its reservation, and a released one releases it, with no reservation read first', async () => {
    const interrupted = { id: 'remote-task', status: { state: 'TASK_STATE_INPUT_REQUIRED' } };
    const a = await admittedTurn('own-interrupted.db');
    const counted = countingReads(a.store);
    const remote = new RemoteClient();
    const open = await verdictInterrupted(depsOn(counted.store, remote), { ...a.turn, reserved: { amounts: a.amounts } }, interrupted);
    expect(open.body).toMatchObject({ state: 'open' });
    expect((await a.store.ledger.reservation(a.reservationId))?.status).toBe('settled');
    const b = await admittedTurn('own-released.db');
    const countedB = countingReads(b.store);
    const failed = await verdictReleased(depsOn(countedB.store, remote), { ...b.turn, reserved: { amounts: b.amounts } }, 'the delegatee refused it');
    expect(failed.body).toMatchObject({ state: 'closed', outcome: 'failed', refused: { reason: 'the delegatee refused it' } });
    expect((await b.store.ledger.reservation(b.reservationId))?.status).toBe('released');
    expect(counted.reads() + countedB.reads()).toBe(0);
    await remote.close();
    await a.store.close();
    await b.store.close();
  });

  it('a released turn whose reservation another node settled meanwhile: no error, that settlement stands', async () => {
    const t = await admittedTurn('own-released-lost.db');
    await t.store.ledger.settle({ reservation_id: t.reservationId, outcome: { kind: 'measured', actual: new Map([['units', 1n]]) }, evidence: refOf(t.attempt), at: NOW() });
    const remote = new RemoteClient();
    const failed = await verdictReleased(depsOn(t.store, remote), { ...t.turn, reserved: { amounts: t.amounts } }, 'the delegatee refused it');
    expect(failed.body).toMatchObject({ state: 'closed', outcome: 'failed' });
    await expectEnded(t.store, t, 'settled');
    await remote.close();
    await t.store.close();
  });

  it('another verdict left it unknown meanwhile: it stands, nothing of this verdict is written (ADR-0014: only reconciliation settles it)', async () => {
    const { store, attemptId, turn, reservationId, effect, amounts } = await admittedTurn('own-unknown.db');
    await store.ledger.settle({ reservation_id: reservationId, outcome: { kind: 'unknown' }, at: NOW() });
    const remote = new RemoteClient();
    const after = await verdict(depsOn(store, remote), { ...turn, reserved: { amounts } }, { kind: 'task', task: completed, fingerprint: fingerprint(completed) }, completed);
    expect(after.body).toMatchObject({ state: 'dispatching' });
    expect((await store.ledger.reservation(reservationId))?.status).toBe('unknown');
    expect((await store.listRevisions(attemptId)).length).toBe(1);
    const receipts = (await store.listCurrent(schemaRefFor('verification_receipt'), { limit: 100 })).records.filter((r) => r.body.effect_id === effect);
    expect(receipts).toEqual([]);
    await remote.close();
    await store.close();
  });
});

describe('the fences of a turn admitted in this process are checked in its verdict\'s commit (RW-003 §1.2)', () => {
  const completed = { id: 'remote-task', status: { state: 'TASK_STATE_COMPLETED' }, artifacts: [{ artifactId: 'a', parts: [{ text: 'done' }] }] };
  /** The delegatee's read-back, during which a control change lands on the agent's stream (a card event racing the verdict). */
  const racingReadBack = (store: Store, space: string) =>
    ({
      call: async () => {
        await store.control.appendControl({ event_type: 'rw003.agent_card.published', control_scope_ref: agentScope(space), actor_ref: actor });
        return completed;
      },
    }) as unknown as RemoteClient;
  const quietReadBack = { call: async () => completed } as unknown as RemoteClient;

  async function fencedTurn(file: string) {
    const t = await admittedTurn(file);
    const head = (await t.store.control.head(agentScope(t.space)))!;
    const fence = { project_id: head.project_id, branch_id: head.branch_id, position: head.position, event_id: head.event_id, event_digest: head.event_digest };
    return { ...t, turn: { ...t.turn, fence_set: [fence], scopes: [agentScope(t.space)], reserved: { amounts: t.amounts } } };
  }

  it('fences that held: succeeded and consumed, with no head or reservation read before the commit', async () => {
    const { store, turn, reservationId, effect } = await fencedTurn('fenced-ok.db');
    const counted = countingReads(store);
    const closed = await verdict(depsOn(counted.store, quietReadBack), turn, { kind: 'task', task: completed, fingerprint: fingerprint(completed) }, completed);
    expect(counted.reads()).toBe(0);
    expect(closed.body).toMatchObject({ state: 'closed', outcome: 'succeeded' });
    expect((await store.ledger.reservation(reservationId))?.status).toBe('settled');
    const receipts = (await store.listCurrent(schemaRefFor('verification_receipt'), { limit: 100 })).records.filter((r) => r.body.effect_id === effect);
    expect(receipts.map((r) => r.body)).toEqual([expect.objectContaining({ outcome: 'succeeded', fences_current: true })]);
    await store.close();
  });

  it('traced: the commit the moved fence refused ends its span as raced, not failed, and the commit judged again has its own', async () => {
    const { store, turn, space } = await fencedTurn('fenced-traced.db');
    const exporter = new InMemorySpanExporter();
    const tracing = (await startTracing(TracingConfig.parse({ enabled: true }), exporter))!;
    let spans: ReturnType<typeof exporter.getFinishedSpans>;
    try {
      await verdict(depsOn(store, racingReadBack(store, space)), turn, { kind: 'task', task: completed, fingerprint: fingerprint(completed) }, completed);
      spans = exporter.getFinishedSpans().filter((sp) => sp.name === 'baton.verdict'); // before shutdown, which empties the exporter
    } finally {
      await tracing.shutdown();
    }
    expect(spans.map((sp) => ({ status: sp.status.code, raced: sp.attributes['baton.raced'], error: sp.attributes['baton.error_code'], outcome: sp.attributes['baton.outcome'] }))).toStrictEqual([
      { status: SpanStatusCode.UNSET, raced: 'fences_moved', error: undefined, outcome: undefined },
      { status: SpanStatusCode.UNSET, raced: undefined, error: undefined, outcome: 'unknown' },
    ]);
    await store.close();
  });

  it('a fence that moved before the commit: never success — unknown, fences_current false, the reservation held', async () => {
    const { store, attemptId, turn, reservationId, effect, space } = await fencedTurn('fenced-moved.db');
    const closed = await verdict(depsOn(store, racingReadBack(store, space)), turn, { kind: 'task', task: completed, fingerprint: fingerprint(completed) }, completed);
    expect(closed.body).toMatchObject({ state: 'closed', outcome: 'unknown' });
    expect((await store.ledger.reservation(reservationId))?.status).toBe('unknown');
    expect((await store.listRevisions(attemptId)).length).toBe(2);
    const receipts = (await store.listCurrent(schemaRefFor('verification_receipt'), { limit: 100 })).records.filter((r) => r.body.effect_id === effect);
    expect(receipts.map((r) => r.body)).toEqual([expect.objectContaining({ outcome: 'unknown', fences_current: false, readback: 'agreed' })]);
    await store.close();
  });
});
