/**
 * Follow-up turns share their delegatee task (issue #25 item 2): a turn whose
 * send was lost is followed by polling that shared task, so the state it
 * finds may be another turn's. A real gateway in front of a real SDK agent
 * that loses chosen sends: one reset unread (the agent never saw it), one run
 * and then dropped (the agent ran it, Baton never heard back).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentsGateway, type AgentsGateway } from '../helpers/agents-gateway.ts';
import { OUTCOME_METADATA } from '../../src/gateway/present.ts';
import { NOT_SHOWN } from '../../src/gateway/path/verify.ts';
import type { Gateway } from '../../src/main.ts';
import { recordAt } from '../../src/store/record-at.ts';
import { until } from '../helpers/until.ts';

const CALLER_KEY = 'follow-up-ownership-caller-key-not-a-secret';
let world: AgentsGateway;
let gw: Gateway;

beforeAll(async () => {
  world = await startAgentsGateway('follow-up-ownership', CALLER_KEY, { lossy: { behaviour: 'lose-marked-sends', name: 'lossy', stepMs: 20 } }, { follow: { tickMs: 50, pollMinMs: 20, pollMaxMs: 50, blockingWaitMs: 2_000 } });
  ({ gw } = world);
}, 60_000);
afterAll(async () => world?.close());

type Task = { id: string; status: { state: string }; metadata: Record<string, { outcome: string | null; verified: boolean }> };
const send = async (text: string, taskId?: string): Promise<{ task: Task; messageId: string }> => {
  const messageId = randomUUID();
  const res = await fetch(`${gw.url}/agents/lossy/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': CALLER_KEY },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId, role: 'ROLE_USER', parts: [{ text }], ...(taskId ? { taskId } : {}) } } }),
  });
  const body = (await res.json()) as { result?: { task: Task }; error?: unknown };
  expect(body.error).toBeUndefined();
  return { task: body.result!.task, messageId };
};

/** The follow-up turn now open on the task: its reservation, and the message its PermissionDecision names. */
async function openTurn(taskId: string): Promise<{ reservationId: string; messageId: unknown }> {
  const rows = await gw.store.work.ofAttempt(taskId);
  expect(rows).toHaveLength(1);
  const r = (await gw.store.ledger.reservation(rows[0]!.reservation_id))!;
  const decision = await recordAt(gw.store, r.decision_ref);
  return { reservationId: r.reservation_id, messageId: (decision?.body.follow_up as { message_id?: unknown } | undefined)?.message_id };
}

const getTaskCount = async (): Promise<number> => ((await (await fetch(`${world.agents.lossy!.url}/_test/log`)).json()) as { counts: Record<string, number> }).counts.GetTask ?? 0;

const settled = (reservationId: string) =>
  until(async () => {
    const r = await gw.store.ledger.reservation(reservationId);
    return r && r.status !== 'held' ? r.status : undefined;
  }, 400, 25, 'the lost turn\'s verdict');

describe('a follow-up turn owns only a task state that shows its message', () => {
  it('a follow-up the agent never saw is not `succeeded` by the turn that completed the task: unknown, held, and not reconcilable from the agent\'s reads', async () => {
    const asked = await send('ask me something');
    expect(asked.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const lost = await send('lose before: blue', asked.task.id);
    // The reply was lost: Baton cannot say what happened, so the caller is told to look again, not to resend.
    expect(lost.task.metadata[OUTCOME_METADATA]!.outcome).toBe('unknown');
    const open = await openTurn(asked.task.id);
    expect(open.messageId).toBe(lost.messageId);

    const answered = await send('red', asked.task.id);
    expect(answered.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(answered.task.metadata[OUTCOME_METADATA]).toMatchObject({ outcome: 'succeeded', verified: true });

    // The follower polls the shared task, finds it COMPLETED by the other turn, and must not call that this turn's success.
    expect(await settled(open.reservationId)).toBe('unknown');
    const reconciled = await gw.dispatcher.reconcile(open.reservationId);
    expect(reconciled).toMatchObject({ status: 'unknown' });
    expect(reconciled.reason).toContain(NOT_SHOWN);
    expect((await gw.store.ledger.reservation(open.reservationId))?.status).toBe('unknown');
    // Whichever verdict committed first, the task shows the turn whose result it is: the lost one never closes it.
    expect((await gw.dispatcher.deps.attempts.get(asked.task.id))!.body).toMatchObject({ state: 'closed', outcome: 'succeeded' });
  }, 30_000);

  it('nor is another turn\'s new question the lost follow-up\'s answer: it waits, and ends unknown when the task completes without it', async () => {
    const asked = await send('ask me first');
    await send('lose before: yellow', asked.task.id);
    const open = await openTurn(asked.task.id);
    const again = await send('ask once more', asked.task.id);
    expect(again.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    // The lost turn's follower reads the new question at least twice (the agent logs each GetTask) and must not take it as its answer.
    const reads = await getTaskCount();
    await until(async () => ((await getTaskCount()) >= reads + 2 ? true : undefined), 400, 25, 'two polls of the new question');
    expect((await gw.store.ledger.reservation(open.reservationId))?.status).toBe('held');
    expect((await send('purple', asked.task.id)).task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(await settled(open.reservationId)).toBe('unknown');
  }, 30_000);

  it('a follow-up the agent ran whose reply was lost is found in the task\'s history and followed to its verified success', async () => {
    const asked = await send('ask me again');
    const lost = await send('lose after: green', asked.task.id);
    expect(lost.task.metadata[OUTCOME_METADATA]!.outcome).toBe('unknown');
    const open = await openTurn(asked.task.id);
    expect(await settled(open.reservationId)).toBe('settled');
    const attempt = (await gw.dispatcher.deps.attempts.get(asked.task.id))!;
    expect(attempt.body).toMatchObject({ state: 'closed', outcome: 'succeeded', effect_id: (await gw.store.ledger.reservation(open.reservationId))!.effect_id });
  }, 30_000);
});
