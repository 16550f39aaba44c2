/**
 * Black-box tests of the e2e delegatee agents: each behaviour runs as its own OS process
 * and is driven only through the SDK client (plus raw undici where the point is the wire).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import { Role, TaskState, type Message, type SendMessageRequest, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, ServiceParameters, withA2AExtensions, type Client } from '@a2a-js/sdk/client';
import { ExtensionSupportRequiredError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import { partsText, textPart } from './agents/card.ts';
import type { Behaviour } from './agents/agent.ts';
import { spawnAgent, stopAll, type SpawnAgentOptions, type SpawnedAgent } from './harness/process.ts';

const TRANSPORTS = ['JSONRPC', 'HTTP+JSON'] as const;
const EXT = 'urn:baton:test:delegation:v1';

const specs = {
  honest: { behaviour: 'honest', name: 'honest', stepMs: 40 },
  lying: { behaviour: 'lying-readback', name: 'liar', stepMs: 10 },
  drop: { behaviour: 'drop-after-accept', name: 'dropper', stepMs: 10 },
  never: { behaviour: 'never-answer', name: 'mute' },
  ext: { behaviour: 'honest', name: 'picky', stepMs: 10, requireExtension: EXT },
} satisfies Record<string, SpawnAgentOptions>;
type Key = keyof typeof specs;
const agents = {} as Record<Key, SpawnedAgent>;

beforeAll(async () => {
  // Spawn in parallel: each tsx start costs about a second.
  const started = await Promise.allSettled(
    Object.entries(specs).map(async ([k, s]) => {
      agents[k as Key] = await spawnAgent(s);
    }),
  );
  const failed = started.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
});
afterAll(async () => {
  await Promise.all(Object.values(agents).map((a) => a.stop()));
  await stopAll(); // safety net for anything a failed beforeAll left behind
});

const clientFor = (url: string, transport: (typeof TRANSPORTS)[number]): Promise<Client> =>
  new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [transport] })).createFromUrl(url);

const message = (text: string, extra: Partial<Message> = {}): Message => ({
  messageId: randomUUID(),
  contextId: '',
  taskId: '',
  role: Role.ROLE_USER,
  parts: [textPart(text)],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
  ...extra,
});
const send = (msg: Message, returnImmediately = false): SendMessageRequest => ({
  tenant: '',
  message: msg,
  configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately },
  metadata: undefined,
});
const asTask = (r: Task | Message): Task => {
  if ('messageId' in r) throw new Error(`expected a Task, got Message ${r.messageId}`);
  return r;
};
const resultText = (t: Task): string => partsText(t.artifacts.find((a) => a.name === 'result')?.parts ?? []);

describe.each(TRANSPORTS)('honest over %s', (transport) => {
  let client: Client;
  beforeAll(async () => {
    client = await clientFor(agents.honest.url, transport);
  });

  it('blocking send completes with the reversed text, and GetTask reads back the same task', async () => {
    const task = asTask(await client.sendMessage(send(message('hello baton'))));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(resultText(task)).toBe('notab olleh');
    const read = await client.getTask({ tenant: '', id: task.id });
    expect(read).toEqual(task);
  });

  it('streams task, WORKING, artifact, COMPLETED as separate events in order', async () => {
    const events: StreamResponse[] = [];
    for await (const ev of client.sendMessageStream(send(message('abc')))) events.push(ev);
    expect(events.length).toBeGreaterThanOrEqual(3);
    const kinds = events.map((e) => {
      const p = e.payload;
      if (p?.$case === 'statusUpdate') return `status:${p.value.status?.state}`;
      return p?.$case ?? 'none';
    });
    expect(kinds).toEqual([
      'task',
      `status:${TaskState.TASK_STATE_WORKING}`,
      'artifactUpdate',
      `status:${TaskState.TASK_STATE_COMPLETED}`,
    ]);
    const first = events[0]?.payload;
    if (first?.$case !== 'task') throw new Error('first event is not a task');
    const read = await client.getTask({ tenant: '', id: first.value.id });
    expect(read.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(resultText(read)).toBe('cba');
  });

  it('cancels a slow task and it stays CANCELED', async () => {
    const started = asTask(await client.sendMessage(send(message('be slow please'), true)));
    expect(started.status?.state).not.toBe(TaskState.TASK_STATE_COMPLETED);
    const canceled = await client.cancelTask({ tenant: '', id: started.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await new Promise((r) => setTimeout(r, 200)); // the executor must not publish anything after CANCELED
    const read = await client.getTask({ tenant: '', id: started.id });
    expect(read.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(read.artifacts).toEqual([]);
  });

  it('GetTask of an unknown id is TaskNotFound', async () => {
    await expect(client.getTask({ tenant: '', id: randomUUID() })).rejects.toBeInstanceOf(TaskNotFoundError);
  });
});

describe.each(TRANSPORTS)('lying-readback over %s', (transport) => {
  it('send says COMPLETED with an artifact, GetTask says FAILED without one', async () => {
    const client = await clientFor(agents.lying.url, transport);
    const task = asTask(await client.sendMessage(send(message('truth'))));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(resultText(task)).toBe('hturt');
    const read = await client.getTask({ tenant: '', id: task.id });
    expect(read.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(read.artifacts).toEqual([]);
  });
});

describe.each(TRANSPORTS)('drop-after-accept over %s', (transport) => {
  it('cuts the connection, yet the request was received and the task completed', async () => {
    const client = await clientFor(agents.drop.url, transport);
    const before = (await agents.drop.log()).acceptedTaskIds.length;
    const contextId = randomUUID(); // client-chosen, so the task can be found again without its id
    // The client sees a transport failure (undici: "other side closed"), not an A2A error.
    await expect(client.sendMessage(send(message('gone', { contextId })))).rejects.toMatchObject({ cause: { code: 'UND_ERR_SOCKET' } });
    const log = await agents.drop.log();
    const mine = log.requests.filter((r) => r.method === 'SendMessage' && r.transport === (transport === 'JSONRPC' ? 'jsonrpc' : 'rest'));
    expect(mine.length).toBeGreaterThanOrEqual(1);
    expect(log.acceptedTaskIds.length).toBe(before + 1);
    const id = log.acceptedTaskIds.at(-1) ?? '';
    const read = await client.getTask({ tenant: '', id });
    expect(read.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(read.contextId).toBe(contextId);
    expect(resultText(read)).toBe('enog');
    await expect(client.getTask({ tenant: '', id: randomUUID() })).rejects.toBeInstanceOf(TaskNotFoundError);
  });
});

describe('drop-after-accept streaming', () => {
  it('the stream fails too', async () => {
    const client = await clientFor(agents.drop.url, 'JSONRPC');
    const drain = async (): Promise<void> => {
      for await (const _ev of client.sendMessageStream(send(message('stream gone')))) void _ev;
    };
    await expect(drain()).rejects.toMatchObject({ cause: { code: 'UND_ERR_SOCKET' } });
    expect((await agents.drop.log()).counts.SendStreamingMessage).toBeGreaterThanOrEqual(1);
  });
});

describe('never-answer', () => {
  it('sends no headers for SendMessage, while the card and GetTask still answer', async () => {
    const dispatcher = new Agent({ headersTimeout: 500 });
    try {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } } });
      const pending = request(`${agents.never.url}/a2a/jsonrpc`, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        body,
      });
      await expect(pending).rejects.toMatchObject({ code: 'UND_ERR_HEADERS_TIMEOUT' });
    } finally {
      await dispatcher.destroy();
    }
    const card = await fetch(`${agents.never.url}/.well-known/agent-card.json`);
    expect(card.status).toBe(200);
    expect(((await card.json()) as { name: string }).name).toBe('mute');
    const client = await clientFor(agents.never.url, 'JSONRPC');
    await expect(client.getTask({ tenant: '', id: randomUUID() })).rejects.toBeInstanceOf(TaskNotFoundError);
    expect((await agents.never.log()).counts.SendMessage).toBe(1);
  });
});

describe.each(TRANSPORTS)('require-extension over %s', (transport) => {
  it('refuses without the A2A-Extensions header and accepts with it, logging what was attached', async () => {
    const client = await clientFor(agents.ext.url, transport);
    await expect(client.sendMessage(send(message('no ext')))).rejects.toBeInstanceOf(ExtensionSupportRequiredError);
    const contract = { parent: 'p-1', budget: { maxDepth: 1 }, nonce: randomUUID() };
    const opts = { serviceParameters: ServiceParameters.create(withA2AExtensions(EXT)) };
    const task = asTask(await client.sendMessage(send(message('with ext', { metadata: { [EXT]: contract } })), opts));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(resultText(task)).toBe('txe htiw');
    const log = await agents.ext.log();
    const hit = log.requests.find((r) => (r.messageMetadata as Record<string, unknown> | undefined)?.[EXT] !== undefined
      && JSON.stringify(r.messageMetadata).includes(contract.nonce));
    expect(hit?.a2aExtensions?.split(',').map((s) => s.trim())).toContain(EXT);
    expect(hit?.messageMetadata).toEqual({ [EXT]: contract });
  });
});

describe('harness', () => {
  it('rejects with the stderr tail when the child dies before its ready line', async () => {
    await expect(spawnAgent({ behaviour: 'bogus' as Behaviour })).rejects.toThrow(/exited before ready[\s\S]*unknown --behaviour bogus/);
  });

  it('kill9 ends the process and its port stops answering', async () => {
    const victim = await spawnAgent({ behaviour: 'honest', name: 'victim' });
    expect((await fetch(`${victim.url}/.well-known/agent-card.json`)).status).toBe(200);
    await victim.kill9();
    await expect(fetch(`${victim.url}/.well-known/agent-card.json`)).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } });
  });
});
