/**
 * Issue #25 item 5 (TCK STREAM-SUB-002, MUST, both bindings): SubscribeToTask
 * on an interrupted task follows the task through its later turns to a
 * terminal state, as the agent itself does — through a real gateway process
 * in front of a real SDK agent, with the stock SDK client on JSON-RPC and on
 * HTTP+JSON.
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textPart } from './agents/card.ts';
import { assertNoDownstreamLeaks } from './gateway/leaks.ts';
import { startWorld, type World } from './gateway/world.ts';

const OUTCOME = 'urn:baton:outcome:v2';
const message = (text: string, taskId = ''): Message => ({ messageId: randomUUID(), contextId: '', taskId, role: Role.ROLE_USER, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] });
const send = (text: string, taskId?: string) => ({ tenant: '', message: message(text, taskId), configuration: undefined, metadata: undefined });

/** The task id, state and outcome metadata an event carries, whichever kind it is. */
function seen(ev: StreamResponse): { id?: string; state?: TaskState; outcome?: { outcome: string | null; verified: boolean } } {
  const p = ev.payload!;
  if (p.$case === 'task') return { id: p.value.id, state: p.value.status?.state, outcome: p.value.metadata?.[OUTCOME] as never };
  if (p.$case === 'statusUpdate') return { id: p.value.taskId, state: p.value.status?.state, outcome: p.value.metadata?.[OUTCOME] as never };
  if (p.$case === 'artifactUpdate') return { id: p.value.taskId };
  return {};
}

let world: World;
beforeAll(async () => {
  world = await startWorld({
    agents: { honest: { behaviour: 'honest', stepMs: 10 } },
    remote: { headersTimeoutMs: 4000, bodyTimeoutMs: 20_000 },
    // The bound on a subscription's wait for the next turn (generous: CI machines are loaded).
    config: { follow: { blockingWaitMs: 8_000, pollMaxMs: 200 } },
  });
}, 60_000);
afterAll(async () => world?.close());

describe.each(['JSONRPC', 'HTTP+JSON'] as const)('SubscribeToTask on an interrupted task (%s)', (transport) => {
  it('stays open through the follow-up turn and closes on its verified COMPLETED, with Baton\'s task id', async () => {
    const client = await world.client('honest', { transport });
    const asked = (await client.sendMessage(send('ask me something'))) as Task;
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const events = client.resubscribeTask({ tenant: '', id: asked.id });
    const first = await events.next();
    expect(first.done).toBe(false);
    expect(seen(first.value as StreamResponse)).toMatchObject({ id: asked.id, state: TaskState.TASK_STATE_INPUT_REQUIRED });
    // The subscription is open and waiting: the caller answers the question on Baton's task id.
    const done = (await client.sendMessage(send('second turn', asked.id))) as Task;
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const rest: StreamResponse[] = [];
    for await (const ev of events) rest.push(ev); // ends: the subscription closes on the terminal state
    expect(rest.length).toBeGreaterThan(0);
    const last = seen(rest[rest.length - 1]!);
    expect(last).toMatchObject({ id: asked.id, state: TaskState.TASK_STATE_COMPLETED });
    expect(last.outcome).toMatchObject({ outcome: 'succeeded', verified: true });
    for (const ev of rest) {
      const s = seen(ev);
      if (s.id !== undefined) expect(s.id).toBe(asked.id);
    }
  }, 60_000);

  it('relays the follow-up turn live: its WORKING with Baton\'s task id, then the verified COMPLETED', async () => {
    const client = await world.client('honest', { transport });
    const asked = (await client.sendMessage(send('ask me something'))) as Task;
    const events = client.resubscribeTask({ tenant: '', id: asked.id });
    expect(seen((await events.next()).value as StreamResponse).state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    // The follow-up is answered at once and held at the agent: only a relay of the live turn can show its WORKING.
    const later = { ...send('wait for release', asked.id), configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true, historyLength: undefined } };
    await client.sendMessage(later);
    await world.agents.honest!.held();
    // The relay starts with the agent's own snapshot (SUBMITTED or already WORKING, as its subscription caught it); the
    // held turn's WORKING must arrive before anything else ends the stream.
    let working = seen((await events.next()).value as StreamResponse);
    if (working.state === TaskState.TASK_STATE_SUBMITTED) working = seen((await events.next()).value as StreamResponse);
    expect(working).toMatchObject({ id: asked.id, state: TaskState.TASK_STATE_WORKING });
    expect(await world.agents.honest!.release()).toBe(1);
    const rest: StreamResponse[] = [];
    for await (const ev of events) rest.push(ev);
    for (const ev of rest) if (seen(ev).id !== undefined) expect(seen(ev).id).toBe(asked.id);
    const last = seen(rest[rest.length - 1]!);
    expect(last).toMatchObject({ id: asked.id, state: TaskState.TASK_STATE_COMPLETED });
    expect(last.outcome).toMatchObject({ outcome: 'succeeded', verified: true });
  }, 60_000);

  it('closes with the CANCELED snapshot when the interrupted task is canceled while it waits', async () => {
    const client = await world.client('honest', { transport });
    const asked = (await client.sendMessage(send('ask me, then cancel'))) as Task;
    const events = client.resubscribeTask({ tenant: '', id: asked.id });
    expect(seen((await events.next()).value as StreamResponse).state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    await client.cancelTask({ tenant: '', id: asked.id, metadata: undefined });
    const rest: StreamResponse[] = [];
    for await (const ev of events) rest.push(ev);
    expect(rest.length).toBeGreaterThan(0);
    expect(seen(rest[rest.length - 1]!)).toMatchObject({ id: asked.id, state: TaskState.TASK_STATE_CANCELED });
  }, 60_000);
});

describe('several subscriptions on one interrupted task', () => {
  it('each follows the follow-up turn to the same verified COMPLETED and closes; the turn is charged once', async () => {
    const rpc = await world.client('honest');
    const rest = await world.client('honest', { transport: 'HTTP+JSON' });
    const asked = (await rpc.sendMessage(send('ask me, twice watched'))) as Task;
    const subs = [rpc.resubscribeTask({ tenant: '', id: asked.id }), rest.resubscribeTask({ tenant: '', id: asked.id }), rpc.resubscribeTask({ tenant: '', id: asked.id })];
    for (const sub of subs) expect(seen((await sub.next()).value as StreamResponse).state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const done = (await rest.sendMessage(send('second turn', asked.id))) as Task;
    const lasts = await Promise.all(
      subs.map(async (sub) => {
        let last: StreamResponse | undefined;
        for await (const ev of sub) last = ev;
        return seen(last!);
      }),
    );
    for (const last of lasts) {
      expect(last).toMatchObject({ id: asked.id, state: TaskState.TASK_STATE_COMPLETED });
      expect(last.outcome).toMatchObject({ outcome: 'succeeded', verified: true });
    }
    const store = world.store();
    try {
      const root = (done.metadata?.[OUTCOME] as { rootDelegationId: string }).rootDelegationId;
      const tree = await store.ledger.tree(root);
      expect(tree!.balances.find((b) => b.dimension === 'invocations')).toMatchObject({ consumed: '2', reserved: '0' });
    } finally {
      await store.close();
    }
  }, 60_000);
});

describe('SubscribeToTask bounds', () => {
  it('an interrupted task that is never answered: the snapshot, then the subscription closes by itself (never an unbounded hang)', async () => {
    const client = await world.client('honest');
    const asked = (await client.sendMessage(send('ask me and walk away'))) as Task;
    const got: StreamResponse[] = [];
    for await (const ev of client.resubscribeTask({ tenant: '', id: asked.id })) got.push(ev);
    expect(got.map(seen)).toEqual([expect.objectContaining({ id: asked.id, state: TaskState.TASK_STATE_INPUT_REQUIRED })]);
  }, 60_000);

  it('no response body a caller received in this suite names a downstream id', async () => {
    await assertNoDownstreamLeaks(world);
  });
});
