import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textPart, partsText } from './agents/card.ts';
import { startWorld, type World } from './gateway/world.ts';

const CONTRACT_EXT = 'urn:rw-agent-delegation:0.1.1:delegation-contract';
const OUTCOME = 'urn:baton:outcome:v1';

const message = (text: string): Message => ({ messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] });
const send = (text: string) => ({ tenant: '', message: message(text), configuration: undefined, metadata: undefined });
const outcomeOf = (t: Task) => (t.metadata?.[OUTCOME] ?? {}) as { outcome: string | null; verified: boolean; attempt_id: string; delegation_id: string };

let world: World;
beforeAll(async () => {
  world = await startWorld({
    agents: { honest: { behaviour: 'honest', stepMs: 20 }, liar: { behaviour: 'lying-readback' }, dropper: { behaviour: 'drop-after-accept' }, silent: { behaviour: 'never-answer' } },
    remote: { headersTimeoutMs: 1500, bodyTimeoutMs: 3000 },
  });
}, 60_000);
afterAll(async () => world?.close());

describe('Baton gateway, end to end with real SDK agents', () => {
  it('forwards SendMessage under a minted child contract and reports succeeded only after read-back', async () => {
    const client = await world.client('honest');
    const task = (await client.sendMessage(send('hello baton'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.id).toMatch(/^att_/);
    expect(partsText(task.artifacts[0]!.parts)).toBe('notab olleh');
    expect(outcomeOf(task)).toMatchObject({ outcome: 'succeeded', verified: true, attempt_id: task.id });

    const log = await world.agents.honest!.log();
    const sent = log.requests.find((r) => r.method === 'SendMessage')!;
    expect(sent.a2aExtensions).toContain(CONTRACT_EXT);
    const chain = (sent.messageMetadata as Record<string, { chain: Array<{ body: Record<string, unknown> }> }>)[CONTRACT_EXT]!.chain;
    expect(chain).toHaveLength(2);
    expect(chain[1]!.body.lineage).toMatchObject({ kind: 'child', depth: 1 });
    expect(log.counts.GetTask).toBeGreaterThanOrEqual(1); // the read-back

    const again = await client.getTask({ tenant: '', id: task.id });
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(again.id).toBe(task.id);
  });
});
