/**
 * A node whose turn's lease was taken over while it followed the turn (it
 * was too slow to renew, and another node claimed the work row) stops at the
 * end of its follow without a verdict: the turn is the other node's to judge,
 * so two verdicts never split one effect (issue #25 item 2;
 * src/gateway/path/run-turn.ts `complete`). The takeover is written into the
 * real store beside the running gateway, as the other node's claim would be.
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { textPart } from './agents/card.ts';
import { startWorld, type World } from './gateway/world.ts';
import { until } from '../test/helpers/until.ts';

let world: World;
beforeAll(async () => {
  world = await startWorld({
    // Each step of the agent outlasts a lease renewal (every max(250 ms, leaseMs / 3)).
    agents: { plodder: { behaviour: 'honest', stepMs: 1_000 } },
    config: { follow: { leaseMs: 1_000 } },
  });
}, 60_000);
afterAll(async () => world?.close());

it('a node that lost the lease mid-follow answers WORKING and leaves the verdict, the attempt and the reservation to the new owner', async () => {
  const client = await world.client('plodder');
  const answer = client.sendMessage({ tenant: '', message: { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [textPart('take me over')], metadata: undefined, extensions: [], referenceTaskIds: [] }, configuration: undefined, metadata: undefined }) as Promise<Task>;
  const store = world.store();
  try {
    type Row = { effect_id: string; attempt_id: string; reservation_id: string; lease_owner: string };
    const row = (await until(async () => store.handle.prepare('SELECT effect_id, attempt_id, reservation_id, lease_owner FROM attempt_work').get() as Row | undefined, 400, 25, 'the admitted turn'))!;
    // Another node's claim: the row is its own now, for longer than this test runs.
    store.handle.prepare("UPDATE attempt_work SET lease_owner = 'node-elsewhere', lease_until = ? WHERE effect_id = ?").run(new Date(Date.now() + 600_000).toISOString(), row.effect_id);
    const task = await answer;
    expect(task.id).toBe(row.attempt_id);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    // No verdict from this node: the attempt is still as admitted, the reservation held, the row the other node's.
    const head = store.handle.prepare('SELECT r.document FROM record_heads h JOIN records r ON r.revision_id = h.revision_id WHERE h.record_id = ?').get(row.attempt_id) as { document: string };
    expect((JSON.parse(head.document) as { body: { state: string } }).body.state).toBe('dispatching');
    expect((await store.ledger.reservation(row.reservation_id))?.status).toBe('held');
    expect((await store.work.get(row.effect_id))?.lease_owner).toBe('node-elsewhere');
  } finally {
    await store.close();
  }
}, 30_000);
