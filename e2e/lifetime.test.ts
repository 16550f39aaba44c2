/**
 * ADR-0014 "Lifetime, limits and errors", end to end: a real Baton process and
 * real SDK delegatees on loopback. Task lifetime is separate from the
 * foreground lifecycle: expiry blocks new admissions without killing admitted
 * work, cancellation keeps its first cause, finalization uses the budget it
 * already reserved, and uncertain reservations outlive the task's horizon.
 *
 * The short-lived preset lives 2 s (GatewayPresetConfig allows 1..3600). Waits
 * for the horizon poll the ledger's own `not_after` and are bounded; nothing
 * asserts on elapsed time.
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textPart, partsText } from './agents/card.ts';
import { expectBatonCode } from './gateway/errors.ts';
import { assertNoDownstreamLeaks } from './gateway/leaks.ts';
import { API_KEY, startWorld, type World } from './gateway/world.ts';
import { pollUntil } from './harness/process.ts';
import type { AttemptBody, ReceiptBody } from '../src/attempts/record.ts';
import type { LedgerTreeNode } from '../src/ledger/types.ts';
import { streamOf } from '../src/control/scope.ts';
import { baton as batonCli } from '../test/cli/run.ts';

const OUTCOME = 'urn:baton:outcome:v2';
/** The short-lived preset's lifetime: long enough to admit, short enough to outlive. */
const LIFETIME_S = 2;
/** slowpoke: SUBMITTED, then three steps to COMPLETED, i.e. it finishes ~3 steps after its admission, well past the horizon. */
const SLOW_STEP_MS = 1500;
const STEADY_KEY = 'e2e-steady-key-not-a-secret';

const message = (text: string): Message => ({ messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] });
const send = (text: string) => ({ tenant: '', message: message(text), configuration: undefined, metadata: undefined });
type OutcomeMeta = { outcome: string | null; verified: boolean; attemptId: string; delegationId: string; rootDelegationId: string; cancelCause?: { cause: string } };
const metaOf = (t: { metadata?: Record<string, unknown> | undefined }) => (t.metadata?.[OUTCOME] ?? {}) as OutcomeMeta;
const stateOf = (ev: StreamResponse | undefined) => {
  const p = ev?.payload;
  return p?.$case === 'statusUpdate' ? p.value.status?.state : p?.$case === 'task' ? p.value.status?.state : undefined;
};

let world: World;
const dbEnv = () => ({ BATON_SQLITE_PATH: `${world.dir}/baton.db`, BATON_LOG_LEVEL: 'silent' });
const cliEnv = () => ({ ...dbEnv(), BATON_KEYS_DIR: `${world.dir}/keys`, BATON_CONFIG: `${world.dir}/baton.json` });

/** Opens a read-only view of the gateway's store for `fn`, always closing it. */
async function withStore<T>(fn: (store: ReturnType<World['store']>) => Promise<T> | T): Promise<T> {
  const store = world.store();
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

const latestAttempt = (id: string) => withStore(async (s) => (await s.getRecord(id))?.body as AttemptBody | undefined);

interface ReservationRow {
  reservation_id: string;
  effect_id: string;
  root_id: string;
  status: string;
  amounts: string;
}
interface EntryRow {
  node_id: string;
  dimension: string;
  /** INTEGER columns: the store reads them as bigint. */
  d_consumed: number | bigint;
  d_reserved: number | bigint;
  reason: string;
}
const reservationsOfRoot = (rootId: string) =>
  withStore((s) => s.handle.prepare('SELECT reservation_id, effect_id, root_id, status, amounts FROM ledger_reservations WHERE root_id = ? ORDER BY created_at').all(rootId) as ReservationRow[]);
const entriesOf = (reservationId: string) =>
  withStore((s) => s.handle.prepare('SELECT node_id, dimension, d_consumed, d_reserved, reason FROM ledger_entries WHERE reservation_id = ? ORDER BY seq').all(reservationId) as EntryRow[]);

/** Invocation balances of every node in the root's tree. */
async function balances(rootId: string): Promise<Array<{ node: string; consumed: string; reserved: string }>> {
  const tree = await withStore((s) => s.ledger.tree(rootId));
  expect(tree).toBeDefined();
  const out: Array<{ node: string; consumed: string; reserved: string }> = [];
  const walk = (n: LedgerTreeNode): void => {
    const b = n.balances.find((x) => x.dimension === 'invocations')!;
    out.push({ node: n.node_id, consumed: b.consumed, reserved: b.reserved });
    n.children.forEach(walk);
  };
  walk(tree!);
  return out;
}

/** The earliest `not_after` in the root's tree: the task's admission horizon. */
async function horizonOf(rootId: string): Promise<number> {
  const tree = await withStore((s) => s.ledger.tree(rootId));
  const all: number[] = [];
  const walk = (n: LedgerTreeNode): void => {
    all.push(Date.parse(n.not_after));
    n.children.forEach(walk);
  };
  walk(tree!);
  return Math.min(...all);
}

/** Waits (bounded) until the task's horizon has passed on this machine's clock, which Baton shares. */
async function waitForExpiry(rootId: string): Promise<number> {
  const horizon = await horizonOf(rootId);
  // Bounded: 10 s of polls, so a task on the 1 h default would fail here rather than hang.
  await pollUntil(async () => Date.now(), (now) => now > horizon + 50, { polls: 200, intervalMs: 50, what: `expiry of ${rootId}` });
  return horizon;
}

/** The attempt's audit stream (started, permission, terminal observations). */
const attemptEvents = (a: AttemptBody) =>
  withStore((s) => s.control.readStream(streamOf({ space_id: a.space_id, scope_kind: 'attempt', scope_id: a.attempt_id }), { limit: 100 }));

const receiptOf = (a: AttemptBody) => withStore(async (s) => (await s.getRecord(a.receipt_ref!.object_id, a.receipt_ref!.revision_id))?.body as ReceiptBody | undefined);

/** Raw JSON-RPC to a delegatee's door, so the wire error code is visible. */
async function rpc(delegatee: string, method: string, params: unknown, key = API_KEY): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string; data?: { baton?: string } } }> {
  const res = await world.fetch(`${world.url}/agents/${delegatee}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': key },
    body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params }),
  });
  return (await res.json()) as never;
}

beforeAll(async () => {
  world = await startWorld({
    agents: {
      slowpoke: { behaviour: 'honest', stepMs: SLOW_STEP_MS },
      asker: { behaviour: 'honest', stepMs: 20 },
      worker: { behaviour: 'honest', stepMs: 20 },
      resetter: { behaviour: 'reset-on-send', stepMs: 20 },
    },
    remote: { headersTimeoutMs: 15_000, bodyTimeoutMs: 20_000 },
    // `planner` (the default caller) issues 2-second roots; `steady` issues one-hour roots.
    presets: [
      { id: 'standard', lifetimeSeconds: LIFETIME_S, maxInvocations: 5 },
      { id: 'long', maxInvocations: 5 },
    ],
    callers: { steady: [STEADY_KEY, 'long'] },
    // The follow-up bound: past the slow task's ~4.5 s, so only the resetter's effect, which no read can ever find, ends unknown.
    config: { revocationSweepMs: 50, follow: { maxFollowMs: 12_000, tickMs: 100, pollMaxMs: 500 } },
  });
}, 60_000);
afterAll(async () => world?.close());

describe('expiry blocks new admissions without killing admitted work', () => {
  it('a task admitted before expiry that finishes after it is not cancelled, and is verified and settled', async () => {
    const client = await world.client('slowpoke');
    const stream = client.sendMessageStream(send('outlive my authority'));
    const first = (await stream.next()).value as StreamResponse;
    expect(first.payload?.$case).toBe('task');
    const { attemptId, rootDelegationId: root } = metaOf(first.payload!.value as Task);
    expect(attemptId).toMatch(/^att_/);

    const horizon = await waitForExpiry(root);
    // Precondition: the work really is still running past the horizon.
    expect((await latestAttempt(attemptId))?.state).not.toBe('closed');

    const events: StreamResponse[] = [first];
    for (let i = 0; i < 50; i++) {
      const next = await stream.next();
      if (next.done) break;
      events.push(next.value);
    }
    const last = events[events.length - 1]!;
    expect(stateOf(last)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(last.payload?.$case).toBe('statusUpdate');
    expect(metaOf(last.payload!.value as { metadata?: Record<string, unknown> })).toMatchObject({ outcome: 'succeeded', verified: true, attemptId });

    // Baton never asked the delegatee to stop.
    const log = await world.agents.slowpoke!.log();
    expect(log.counts.CancelTask ?? 0).toBe(0);

    const attempt = (await latestAttempt(attemptId))!;
    expect(attempt).toMatchObject({ state: 'closed', outcome: 'succeeded' });
    const receipt = (await receiptOf(attempt))!;
    expect(receipt).toMatchObject({ outcome: 'succeeded', readback: 'agreed', fences_current: true });
    expect(Date.parse(receipt.checked_at)).toBeGreaterThan(horizon); // the verdict is after expiry
    expect((await withStore((s) => s.ledger.reservation(attempt.reservation_id)))?.status).toBe('settled');
    for (const b of await balances(root)) expect(b).toMatchObject({ consumed: '1', reserved: '0' });
  }, 30_000);

  it('a follow-up turn on an INPUT_REQUIRED task after expiry is refused with context_invalidated and never reaches the agent', async () => {
    const client = await world.client('asker');
    const asked = (await client.sendMessage(send('ask me later'))) as Task;
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const { rootDelegationId: root } = metaOf(asked);
    await waitForExpiry(root);
    const sends = (counts: Record<string, number>) => (counts.SendMessage ?? 0) + (counts.SendStreamingMessage ?? 0);
    const before = sends((await world.agents.asker!.log()).counts);
    const reservationsBefore = await reservationsOfRoot(root);
    expect(reservationsBefore).toHaveLength(1);

    const followUp = { message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: asked.id, contextId: asked.contextId, parts: [{ text: 'here is my answer' }] } };
    const refused = await rpc('asker', 'SendMessage', followUp);
    expect(refused.result).toBeUndefined();
    expect(refused.error?.code).toBe(-32053); // context_invalidated (src/http/error-map.ts)
    expect(refused.error?.message).toMatch(/expired/);
    // The HTTP+JSON binding refuses it too.
    const rest = await world.fetch(`${world.url}/agents/asker/a2a/rest/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY },
      body: JSON.stringify({ message: { ...followUp.message, messageId: randomUUID() } }),
    });
    expect(rest.status).toBe(409);
    const restBody = (await rest.json()) as { error: { message: string; details: Array<{ domain?: string; metadata?: Record<string, string> }> } };
    expect(restBody.error.details.find((d) => d.domain === 'baton')?.metadata?.baton).toBe('context_invalidated');
    expect(restBody.error.message).toMatch(/expired/);
    // The streaming door refuses it the same way (through the SDK client).
    await expectBatonCode(
      (async () => {
        for await (const _ of client.sendMessageStream({ tenant: '', message: { ...message('again'), taskId: asked.id, contextId: asked.contextId }, configuration: undefined, metadata: undefined })) break;
      })(),
      'context_invalidated',
    );

    const log = await world.agents.asker!.log();
    expect(sends(log.counts)).toBe(before);
    // No admission happened: still the first turn's reservation only, and it was not released.
    const after = await reservationsOfRoot(root);
    expect(after.map((r) => r.reservation_id)).toEqual(reservationsBefore.map((r) => r.reservation_id));
    expect(after[0]!.status).not.toBe('released');
    const attempt = (await latestAttempt(asked.id))!;
    expect(attempt.state).not.toBe('closed');
    expect(attempt.reservation_id).toBe(reservationsBefore[0]!.reservation_id);
  }, 30_000);

  // Baton's code travels as a v1.0 ErrorInfo detail on both bindings, with its own JSON-RPC code and HTTP status.
  it('the expired follow-up is refused with the mapped wire codes on both bindings', async () => {
    const client = await world.client('asker');
    const asked = (await client.sendMessage(send('ask me, then check the codes'))) as Task;
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    await waitForExpiry(metaOf(asked).rootDelegationId);
    const followUp = () => ({ message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: asked.id, contextId: asked.contextId, parts: [{ text: 'late answer' }] } });
    const refused = await rpc('asker', 'SendMessage', followUp());
    expect(refused.error).toMatchObject({ code: -32053, data: [{ reason: 'CONTEXT_INVALIDATED', domain: 'baton', metadata: { baton: 'context_invalidated' } }] });
    const rest = await world.fetch(`${world.url}/agents/asker/a2a/rest/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY },
      body: JSON.stringify(followUp()),
    });
    expect(rest.status).toBe(409);
    // google.rpc.Status named after the HTTP status (409 ABORTED), not after the carrier class.
    expect(await rest.json()).toMatchObject({ error: { code: 409, status: 'ABORTED', details: [{ reason: 'CONTEXT_INVALIDATED', metadata: { baton: 'context_invalidated' } }] } });
  }, 30_000);
});

/** Streams a `slow` task at `worker` as `steady`; resolves with the ids once it is WORKING, leaving the stream open. */
async function runningSlowTask(client: Client) {
  const stream = client.sendMessageStream(send('slow: stop me'));
  const events: StreamResponse[] = [];
  for (let i = 0; i < 10; i++) {
    const next = await stream.next();
    if (next.done) break;
    events.push(next.value);
    if (stateOf(next.value) === TaskState.TASK_STATE_WORKING) break;
  }
  expect(stateOf(events[events.length - 1])).toBe(TaskState.TASK_STATE_WORKING);
  const task = events.find((e) => e.payload?.$case === 'task')!.payload!.value as Task;
  const drain = async () => {
    for (let i = 0; i < 20; i++) if ((await stream.next()).done) return;
  };
  return { attemptId: task.id, root: metaOf(task).rootDelegationId, drain };
}

const revoke = async (root: string, reason: string) => {
  const out = await batonCli(['control', 'revoke', root, '--reason', reason], dbEnv());
  expect(out.stderr).toBe('');
  expect(out.code).toBe(0);
};

describe('cancellation preserves its first cause', () => {
  it('a caller cancel, then a revocation of the root: the attempt, its receipt and its stream still say the caller cancelled it', async () => {
    const client = await world.client('worker', { key: STEADY_KEY });
    const { attemptId, root, drain } = await runningSlowTask(client);
    const cancelled = await client.cancelTask({ tenant: '', id: attemptId, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await drain();
    const closed = (await latestAttempt(attemptId))!;
    expect(closed).toMatchObject({ state: 'closed', outcome: 'cancelled', cancel_cause: { cause: 'caller' } });
    const revsBefore = (await withStore((s) => s.listRevisions(attemptId))).length;
    const cancelsBefore = (await world.agents.worker!.log()).counts.CancelTask ?? 0;
    expect(cancelsBefore).toBe(1);

    await revoke(root, 'e2e: revoked after the caller cancelled');
    await pollUntil(() => withStore((s) => s.control.head({ space_id: closed.space_id, scope_kind: 'delegation', scope_id: root })), (h) => h?.state === 'revoked', { what: 'revoked head' });
    // Whole revocation sweep passes after the head moved: pass+1 and pass+2 both began after the revocation was durable.
    const pass = (await world.baton.nextLine((m) => typeof m.sweep_pass === 'number')).sweep_pass as number;
    await world.baton.nextLine((m) => typeof m.sweep_pass === 'number' && m.sweep_pass >= pass + 2);

    const after = (await latestAttempt(attemptId))!;
    expect(after).toMatchObject({ state: 'closed', outcome: 'cancelled', cancel_cause: { cause: 'caller' } });
    expect(after.cancel_cause).toEqual(closed.cancel_cause);
    expect(after.receipt_ref).toEqual(closed.receipt_ref);
    expect(await withStore((s) => s.listRevisions(attemptId))).toHaveLength(revsBefore);
    const receipt = (await receiptOf(after))!;
    expect(receipt).toMatchObject({ outcome: 'cancelled', readback: 'agreed', fences_current: true });
    expect(receipt.reasons.join(' ')).not.toMatch(/control head moved|revok/);
    const terminals = (await attemptEvents(after)).filter((e) => e.event_type === 'rw003.execution.terminal');
    expect(terminals.map((e) => e.outcome)).toEqual(['cancelled']);
    expect((await world.agents.worker!.log()).counts.CancelTask ?? 0).toBe(cancelsBefore); // no second stop request
    // The caller reads the same first cause back.
    const read = await client.getTask({ tenant: '', id: attemptId });
    expect(metaOf(read)).toMatchObject({ outcome: 'cancelled', cancelCause: { cause: 'caller' } });
  }, 30_000);

  it('a revocation, then a caller cancel: the attempt still says it was revoked', async () => {
    const client = await world.client('worker', { key: STEADY_KEY });
    const { attemptId, root, drain } = await runningSlowTask(client);
    await revoke(root, 'e2e: revoked while running');
    const closed = await pollUntil(() => latestAttempt(attemptId), (a) => a?.state === 'closed', { polls: 200, intervalMs: 50, what: 'the revocation sweep closing the attempt' });
    await drain();
    expect(closed!.cancel_cause).toMatchObject({ cause: 'revocation' });
    await client.cancelTask({ tenant: '', id: attemptId, metadata: undefined }).catch(() => undefined); // a late, second cause
    const after = (await latestAttempt(attemptId))!;
    expect(after.cancel_cause).toEqual(closed!.cancel_cause);
    expect(after.outcome).toBe(closed!.outcome);
    expect(after.receipt_ref).toEqual(closed!.receipt_ref);
  }, 30_000);
});

describe("expired tasks' uncertain reservations are not released", () => {
  it('an unknown effect stays held past expiry, keeps its root budget, and an operator resolution settles exactly the reserved amount', async () => {
    const client = await world.client('resetter');
    // The agent received the send and reset the connection: the caller still gets Baton's task id.
    const lost = (await client.sendMessage(send('reset me, then expire'))) as Task;
    expect(lost.id).toMatch(/^att_/);
    expect(metaOf(lost).outcome).toBe('unknown');
    // No read can ever find the task, so the follower ends it as unknown at its bound — held, never released.
    const attempt = (await pollUntil(() => latestAttempt(lost.id), (a) => a?.state === 'closed', { polls: 400, intervalMs: 50, what: 'the follow-up bound' }))!;
    const res = attempt.reservation_id;
    const root = attempt.root_ref.object_id;
    expect(attempt.outcome).toBe('unknown');

    await waitForExpiry(root);

    const unresolved = await batonCli(['ledger', 'unresolved'], dbEnv());
    expect(unresolved.code).toBe(0);
    expect(unresolved.stdout).toMatch(new RegExp(`^${res}\\s+unknown\\s+effect ${attempt.effect_id}\\s+root ${root}`, 'm'));
    expect((await withStore((s) => s.ledger.reservation(res)))?.status).toBe('unknown');
    const held = await balances(root);
    expect(held.length).toBe(2); // root and the child minted for the delegatee
    for (const b of held) expect(b).toMatchObject({ consumed: '0', reserved: '1' });

    // Automatic reconciliation after expiry cannot settle it either: nothing proves the effect.
    const auto = await batonCli(['reconcile'], cliEnv());
    expect(auto.code).toBe(0);
    expect(auto.stdout).toMatch(new RegExp(`^${res}\\s+unknown\\s+the delegatee never named a task`, 'm'));
    expect((await withStore((s) => s.ledger.reservation(res)))?.status).toBe('unknown');
    // The effect was sent once and never again: following it only ever read (ListTasks by Baton's context).
    const counts = (await world.agents.resetter!.log()).counts;
    expect((counts.SendMessage ?? 0) + (counts.SendStreamingMessage ?? 0)).toBe(1);
    expect(Object.keys(counts).filter((m) => m !== 'SendMessage' && m !== 'SendStreamingMessage' && m !== 'ListTasks')).toEqual([]);

    const manual = await batonCli(['reconcile', '--resolve', res, '--as', 'consumed', '--note', 'e2e: partner confirmed the effect after the task expired'], cliEnv());
    expect(manual.stderr).toBe('');
    expect(manual.stdout).toContain(`${res}  settled`);
    expect((await withStore((s) => s.ledger.reservation(res)))?.status).toBe('settled');
    for (const b of await balances(root)) expect(b).toMatchObject({ consumed: '1', reserved: '0' });
    // Exactly the reserved amount moved from reserved to consumed on every node, once.
    const entries = await entriesOf(res);
    const settled = entries.filter((e) => e.reason.startsWith('settle'));
    expect(settled.map((e) => e.node_id).sort()).toEqual(held.map((b) => b.node).sort());
    for (const e of settled) expect({ dimension: e.dimension, d_consumed: Number(e.d_consumed), d_reserved: Number(e.d_reserved) }).toEqual({ dimension: 'invocations', d_consumed: 1, d_reserved: -1 });
    expect(entries.reduce((n, e) => n + Number(e.d_reserved), 0)).toBe(0);
  }, 90_000); // four CLI processes: 2–3 s each on a loaded machine
});

describe('finalization uses its existing budget', () => {
  it('a verdict reached by a GetTask after expiry settles the reservation admitted before it; nothing new is admitted', async () => {
    const sent = await rpc('slowpoke', 'SendMessage', { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'finish me later' }] }, configuration: { returnImmediately: true } });
    expect(sent.error).toBeUndefined();
    const task = sent.result!.task as { id: string; status: { state: string }; metadata: Record<string, unknown> };
    expect(task.status.state).not.toBe('TASK_STATE_COMPLETED');
    const { attemptId, rootDelegationId: root } = metaOf(task);
    const admitted = (await latestAttempt(attemptId))!;
    const horizon = await waitForExpiry(root);
    expect((await latestAttempt(attemptId))?.state).not.toBe('closed');

    const client = await world.client('slowpoke');
    const done = await pollUntil(() => client.getTask({ tenant: '', id: attemptId }), (t) => t.status?.state === TaskState.TASK_STATE_COMPLETED, { polls: 100, intervalMs: 100, what: 'the slow task completing' });
    expect(partsText(done.artifacts[0]!.parts)).toBe('retal em hsinif');
    expect(metaOf(done)).toMatchObject({ outcome: 'succeeded', verified: true });

    const closed = (await latestAttempt(attemptId))!;
    expect(closed).toMatchObject({ state: 'closed', outcome: 'succeeded', reservation_id: admitted.reservation_id, effect_id: admitted.effect_id });
    expect(Date.parse((await receiptOf(closed))!.checked_at)).toBeGreaterThan(horizon);
    // One reservation for the whole task, admitted before expiry and settled by the verdict.
    const reservations = await reservationsOfRoot(root);
    expect(reservations).toEqual([expect.objectContaining({ reservation_id: admitted.reservation_id, effect_id: admitted.effect_id, status: 'settled' })]);
    const revisions = await withStore((s) => s.listRevisions(attemptId));
    expect(new Set(revisions.map((r) => (r.body as AttemptBody).reservation_id))).toEqual(new Set([admitted.reservation_id]));
    const reasons = (await entriesOf(admitted.reservation_id)).map((e) => e.reason);
    expect(new Set(reasons)).toEqual(new Set(['admit', 'settle:measured']));
    // The attempt stream shows a single permission evaluation: the one before expiry.
    const events = await attemptEvents(closed);
    expect(events.filter((e) => e.event_type === 'rw003.permission.evaluated')).toHaveLength(1);
    expect(events.filter((e) => e.event_type === 'rw003.execution.terminal').map((e) => e.outcome)).toEqual(['succeeded']);
    for (const b of await balances(root)) expect(b).toMatchObject({ consumed: '1', reserved: '0' });
    expect((await world.agents.slowpoke!.log()).counts.CancelTask ?? 0).toBe(0);
  }, 30_000);
});

describe('what callers receive', () => {
  it('no response body any caller received in this suite names a delegatee task/context id or the contract extension', async () => {
    await assertNoDownstreamLeaks(world);
  });
});
