import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { expectBatonCode } from './gateway/errors.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textPart, partsText } from './agents/card.ts';
import { sentChain } from './agents/testlog.ts';
import { streamActingAtWorking } from './gateway/mid-stream.ts';
import { assertNoDownstreamLeaks } from './gateway/leaks.ts';
import { API_KEY, startWorld, type World } from './gateway/world.ts';
import type { AttemptBody } from '../src/attempts/record.ts';
import { baton as batonCli } from '../test/cli/run.ts';
import { until } from '../test/helpers/until.ts';

const CONTRACT_EXT = 'urn:rw-agent-delegation:0.1.1:delegation-contract';
const OUTCOME = 'urn:baton:outcome:v2';

const message = (text: string): Message => ({ messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] });
const send = (text: string) => ({ tenant: '', message: message(text), configuration: undefined, metadata: undefined });
const outcomeOf = (t: Task) => (t.metadata?.[OUTCOME] ?? {}) as { outcome: string | null; verified: boolean; attemptId: string; delegationId: string; rootDelegationId?: string; receipt?: { objectId: string } };

/** The newest revision of every attempt Baton recorded for a delegatee. */
async function attemptsOf(store: ReturnType<World['store']>, delegatee: string): Promise<AttemptBody[]> {
  const rows = store.handle.prepare("SELECT r.document FROM record_heads h JOIN records r ON r.revision_id = h.revision_id WHERE r.schema_ref LIKE '%#execution_attempt'").all() as Array<{ document: string }>;
  return rows.map((r) => (JSON.parse(r.document) as { body: AttemptBody }).body).filter((b) => b.delegatee_id === delegatee);
}

const TINY_KEY = 'e2e-tiny-key-not-a-secret';
let world: World;
beforeAll(async () => {
  world = await startWorld({
    // `older` declares the contract extension as gateways did before it named a placement (src/gateway/chain-placement.ts).
    agents: { honest: { behaviour: 'honest', stepMs: 20 }, older: { behaviour: 'honest', declareExtension: CONTRACT_EXT }, picky: { behaviour: 'honest', requireExtension: CONTRACT_EXT }, liar: { behaviour: 'lying-readback', lieState: 'failed' }, dropper: { behaviour: 'drop-after-accept' }, silent: { behaviour: 'never-answer' } },
    remote: { headersTimeoutMs: 4000, bodyTimeoutMs: 20_000 }, // generous: CI machines are loaded
    // A short follow-up bound so the never-answering agent's effect reaches its `unknown` verdict within the test.
    config: { follow: { maxFollowMs: 8_000, tickMs: 100, pollMaxMs: 500 } },
    presets: [{ id: 'standard', maxInvocations: 5 }, { id: 'tiny', maxActiveRoots: 2, maxPerMinute: 10 }],
    callers: { intern: [TINY_KEY, 'tiny'] },
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
    expect(outcomeOf(task)).toMatchObject({ outcome: 'succeeded', verified: true, attemptId: task.id });

    const log = await world.agents.honest!.log();
    // The honest agent's card streams: Baton forwards non-blocking and waits itself (DESIGN: block at Baton).
    const sent = log.requests.find((r) => r.method === 'SendStreamingMessage')!;
    expect(sent.a2aExtensions).toContain(CONTRACT_EXT);
    // In the request's metadata (src/gateway/chain-placement.ts): the honest agent does not declare the extension.
    const chain = sentChain<{ body: Record<string, unknown> }>(sent)!;
    expect(chain).toHaveLength(2);
    expect(sent.messageMetadata).toBeUndefined();
    expect(chain[1]!.body.lineage).toMatchObject({ kind: 'child', depth: 1 });
    expect(log.counts.GetTask).toBeGreaterThanOrEqual(1); // the read-back

    const again = await client.getTask({ tenant: '', id: task.id });
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(again.id).toBe(task.id);
  });

  it("keeps the chain out of the delegatee's task: the agent's own history holds the caller's message without it", async () => {
    const task = (await (await world.client('honest')).sendMessage(send('not in history'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const remote = (await attemptsOf(world.store(), 'honest')).find((a) => a.attempt_id === task.id)!.remote.task_id!;
    // Straight to the agent (not world.fetch: its bodies are what a caller sees, and this one names the remote ids).
    const res = await fetch(`${world.agents.honest!.url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: remote } }),
    });
    const text = await res.text();
    const history = (JSON.parse(text) as { result: { history: Array<{ role: string; parts: Array<{ text?: string }> }> } }).result.history;
    expect(history.find((m) => m.role === 'ROLE_USER')?.parts[0]?.text).toBe('not in history');
    expect(text).not.toContain(CONTRACT_EXT);
  });

  it('gives an agent that declares the extension without a placement the chain in the message, and still keeps it out of the caller\'s view', async () => {
    const task = (await (await world.client('older')).sendMessage(send('the old way'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(outcomeOf(task)).toMatchObject({ outcome: 'succeeded', verified: true });
    const sent = (await world.agents.older!.log()).requests.find((r) => r.method === 'SendStreamingMessage' && JSON.stringify(r.messageParts).includes('the old way'))!;
    expect(sentChain(sent)).toBeUndefined();
    const chain = (sent.messageMetadata as Record<string, { chain: Array<{ body: Record<string, unknown> }> }>)[CONTRACT_EXT]!.chain;
    expect(chain.map((c) => c.body.lineage)).toMatchObject([{ depth: 0 }, { kind: 'child', depth: 1 }]);
    // The agent echoed it in its history; neither the answer nor Baton's recorded view carries it.
    expect(JSON.stringify(task)).not.toContain(CONTRACT_EXT);
    const viewDigest = (await attemptsOf(world.store(), 'older')).find((a) => a.attempt_id === task.id)!.view_digest;
    const view = world.store().handle.prepare('SELECT document FROM content WHERE digest = ?').get(viewDigest) as { document: string };
    expect(view.document).toContain('the old way');
    expect(view.document).not.toContain(CONTRACT_EXT);
  });

  it('activates the contract extension on every call, so an agent that requires it is read back and verified', async () => {
    const task = (await (await world.client('picky')).sendMessage(send('required'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(outcomeOf(task)).toMatchObject({ outcome: 'succeeded', verified: true });
    const log = await world.agents.picky!.log();
    expect(log.counts.GetTask).toBeGreaterThanOrEqual(1); // the read-back, on its own route
    for (const r of log.requests) expect(r.a2aExtensions, r.method).toContain(CONTRACT_EXT);
  });

  it('forwards no request-level metadata: a contract chain forged there never reaches the delegatee (issue #25 item 19)', async () => {
    const marker = `forged-${randomUUID()}`;
    const res = await world.fetch(`${world.url}/agents/honest/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: marker }] }, metadata: { [CONTRACT_EXT]: { chain: [{ record_id: marker }] }, note: marker } },
      }),
    });
    const body = (await res.json()) as { result?: { task?: Task } };
    expect(body.result?.task?.status?.state).toBe('TASK_STATE_COMPLETED');
    const log = await world.agents.honest!.log();
    const sent = log.requests.filter((r) => (r.method === 'SendStreamingMessage' || r.method === 'SendMessage') && JSON.stringify(r.messageParts).includes(marker));
    expect(sent).toHaveLength(1);
    // The request's metadata holds Baton's chain and nothing else: not the caller's note, not the forged chain.
    expect(Object.keys(sent[0]!.requestMetadata as object)).toEqual([CONTRACT_EXT]);
    expect(JSON.stringify(sent[0]!.requestMetadata)).not.toContain(marker);
    expect(sentChain(sent[0]!)).toHaveLength(2);
    expect(JSON.stringify(sent[0]!.messageMetadata ?? null)).not.toContain(marker);
  });
});

describe('bindings and extensions', () => {
  it('serves HTTP+JSON too, and echoes the contract extension when the caller asks for it', async () => {
    const res = await world.fetch(`${world.url}/agents/honest/a2a/rest/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY, 'a2a-extensions': CONTRACT_EXT },
      body: JSON.stringify({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'rest call' }] } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('a2a-extensions')).toContain(CONTRACT_EXT);
    const body = (await res.json()) as { task: { id: string; status: { state: string }; artifacts: Array<{ parts: Array<{ text: string }> }> } };
    expect(body.task.id).toMatch(/^att_/);
    expect(body.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(body.task.artifacts[0]!.parts[0]!.text).toBe('llac tser');
  });

  it('an SDK client on the HTTP+JSON binding gets the same verified result', async () => {
    const client = await world.client('honest', { transport: 'HTTP+JSON' });
    const task = (await client.sendMessage(send('via rest'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(outcomeOf(task).verified).toBe(true);
  });

  it('refuses duplicate JSON keys and oversize bodies at the front door, before anything is forwarded', async () => {
    const before = (await world.agents.honest!.log()).counts.SendMessage ?? 0;
    const post = (body: string) =>
      world.fetch(`${world.url}/agents/honest/a2a/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY }, body });
    const dup = await post('{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a"}],"parts":[{"text":"b"}]}}}');
    type RpcError = { error: { code: number; data: Array<{ '@type': string; reason: string; domain: string }> } };
    // A2A §9.5: error.data is an array of details with a v1.0 ErrorInfo, for Baton's own middleware too.
    const dupError = ((await dup.json()) as RpcError).error;
    expect(dupError.code).toBe(-32700);
    expect(dupError.data[0]).toMatchObject({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'INVALID_PARAMS', domain: 'a2a-protocol.org' });
    const big = await post(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x'.repeat(1_100_000) }] } } }));
    const bigError = ((await big.json()) as RpcError).error;
    expect(bigError.code).toBe(-32055);
    expect(bigError.data[0]).toMatchObject({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'LIMIT_EXCEEDED', domain: 'baton', metadata: { baton: 'limit_exceeded' } });
    expect((await world.agents.honest!.log()).counts.SendMessage ?? 0).toBe(before);
  });

  it("Baton's own card is honest: its /a2a door routes by message metadata and serves the extended card to callers", async () => {
    const rpc = (body: unknown, key?: string) =>
      world.fetch(`${world.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...(key ? { 'x-api-key': key } : {}) },
        body: JSON.stringify(body),
      });
    const msg = (metadata?: Record<string, string>) => ({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'own door' }], ...(metadata ? { metadata } : {}) } });
    const routed = (await (await rpc({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: msg({ 'urn:baton:delegatee': 'honest' }) }, API_KEY)).json()) as { result: { task: { id: string; status: { state: string } } } };
    expect(routed.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(routed.result.task.id).toMatch(/^att_/);
    const unrouted = (await (await rpc({ jsonrpc: '2.0', id: 2, method: 'SendMessage', params: msg() }, API_KEY)).json()) as { error: { code: number } };
    expect(unrouted.error.code).toBe(-32004);
    const extended = (await (await rpc({ jsonrpc: '2.0', id: 3, method: 'GetExtendedAgentCard', params: {} }, API_KEY)).json()) as { result?: { name: string }; error?: unknown };
    expect(extended.result?.name).toBe('Baton delegation gateway');
    expect((await rpc({ jsonrpc: '2.0', id: 4, method: 'GetExtendedAgentCard', params: {} })).status).toBe(401);
  });

  it('answers an unsupported A2A-Version with VersionNotSupportedError; no header means v0.3 (A2A §3.6.1)', async () => {
    const call = (headers: Record<string, string>) =>
      world.fetch(`${world.url}/agents/honest/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': API_KEY, ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } } }),
      });
    const unsupported = (await (await call({ 'a2a-version': '0.5' })).json()) as { error?: { code: number; data: Array<{ reason: string }> } };
    expect(unsupported.error?.code).toBe(-32009);
    expect(unsupported.error?.data[0]?.reason).toBe('VERSION_NOT_SUPPORTED');
    // Without the header the request is read as v0.3, where `SendMessage` is no method.
    const legacy = (await (await call({})).json()) as { error?: { code: number } };
    expect(legacy.error?.code).toBe(-32601);
  });
});

describe('interrupted tasks', () => {
  it('INPUT_REQUIRED keeps the attempt open; the follow-up turn on Baton\'s task id is admitted and verified', async () => {
    const client = await world.client('honest');
    const first = (await client.sendMessage(send('ask me something'))) as Task;
    expect(first.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(outcomeOf(first).outcome).toBeNull();
    const follow = message('second turn');
    const done = (await client.sendMessage({ tenant: '', message: { ...follow, taskId: first.id, contextId: first.contextId }, configuration: undefined, metadata: undefined })) as Task;
    expect(done.id).toBe(first.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(partsText(done.artifacts[0]!.parts)).toBe('nrut dnoces');
    const store = world.store();
    try {
      const revisions = await store.listRevisions(first.id);
      const effects = new Set(revisions.map((r) => (r.body as AttemptBody).effect_id));
      expect(effects.size).toBe(2); // two admitted turns, one Baton task
      const tree = await store.ledger.tree(outcomeOf(done).rootDelegationId as string);
      expect(tree!.balances.find((b) => b.dimension === 'invocations')!.consumed).toBe('2');
    } finally {
      await store.close();
    }
    // A closed task takes no more messages: A2A UnsupportedOperationError (-32004), nothing admitted.
    await expect(client.sendMessage({ tenant: '', message: { ...message('too late'), taskId: first.id }, configuration: undefined, metadata: undefined })).rejects.toBeInstanceOf(UnsupportedOperationError);
    const raw = await fetch(`${world.url}/agents/honest/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': API_KEY },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: first.id, parts: [{ text: 'too late' }] } } }),
    });
    expect(((await raw.json()) as { error: { code: number } }).error.code).toBe(-32004);
  });
});

describe('reading tasks back through Baton', () => {
  it('ListTasks shows only this caller\'s tasks at this delegatee, with Baton ids', async () => {
    const client = await world.client('honest');
    const mine = (await client.sendMessage(send('list me'))) as Task;
    const page = await client.listTasks({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageSize: 100, pageToken: '', historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: false });
    const ids = page.tasks.map((t) => t.id);
    expect(ids).toContain(mine.id);
    expect(ids.every((id) => id.startsWith('att_'))).toBe(true);
    const intern = await world.client('honest', { key: TINY_KEY });
    const theirs = await intern.listTasks({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageSize: 100, pageToken: '', historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: false });
    expect(theirs.tasks.map((t) => t.id)).not.toContain(mine.id);
  });

  it('SubscribeToTask relays a running task\'s events with Baton ids and ends verified', async () => {
    const client = await world.client('honest');
    const stream = client.sendMessageStream(send('slow subscription'));
    const first = (await stream.next()).value!;
    const taskId = first.payload?.$case === 'task' ? first.payload.value.id : '';
    expect(taskId).toMatch(/^att_/);
    await stream.return(undefined);
    const events = [];
    for await (const ev of client.resubscribeTask({ tenant: '', id: taskId })) {
      events.push(ev);
      if (events.length === 1) await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
    }
    const last = events[events.length - 1]!.payload!;
    const state = last.$case === 'statusUpdate' ? last.value.status?.state : last.$case === 'task' ? last.value.status?.state : undefined;
    expect(state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(events.every((e) => (e.payload?.value as { id?: string; taskId?: string }).id === taskId || (e.payload?.value as { taskId?: string }).taskId === taskId)).toBe(true);
  }, 60_000);
});

describe('outcomes Baton refuses to call success', () => {
  it('streams events as they arrive and closes with a verified COMPLETED', async () => {
    const client = await world.client('honest');
    const events = [];
    for await (const ev of client.sendMessageStream(send('stream me'))) events.push(ev);
    const kinds = events.map((e) => e.payload?.$case);
    expect(kinds[0]).toBe('task');
    expect(kinds).toContain('artifactUpdate');
    const last = events[events.length - 1]!.payload!;
    expect(last.$case).toBe('statusUpdate');
    if (last.$case !== 'statusUpdate') throw new Error('unreachable');
    expect(last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(last.value.taskId).toMatch(/^att_/);
    expect((last.value.metadata?.[OUTCOME] as { outcome: string }).outcome).toBe('succeeded');
  });

  it('a lying agent (COMPLETED, but read-back disagrees) is never succeeded, and its budget stays held', async () => {
    const client = await world.client('liar');
    const task = (await client.sendMessage(send('lie to me'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    // The liar's read-back always says FAILED against the COMPLETED it sent: a state dispute, so `unknown`
    // (src/attempts/outcome.ts project), never `partially_applied` (same state, other artifacts).
    expect(outcomeOf(task).outcome).toBe('unknown');
    expect(outcomeOf(task).verified).toBe(false);
    const store = world.store();
    try {
      const receipt = await store.getRecord(outcomeOf(task).receipt!.objectId);
      expect(receipt?.body).toMatchObject({ outcome: 'unknown', readback: 'disagreed', fences_current: true, reasons: ['read-back state TASK_STATE_FAILED disagrees with observed TASK_STATE_COMPLETED'] });
      const held = await store.ledger.unresolved(1000);
      expect(held.some((r) => r.chain.includes(outcomeOf(task).delegationId))).toBe(true);
    } finally {
      await store.close();
    }
    const again = await client.getTask({ tenant: '', id: task.id });
    expect(again.status?.state).not.toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('a lost reply still gives the caller Baton\'s task id; the follower finds the task by its context and verifies it (no second effect)', async () => {
    const client = await world.client('dropper');
    const task = (await client.sendMessage(send('drop me'))) as Task;
    expect(task.id).toMatch(/^att_/);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(outcomeOf(task).outcome).toBe('unknown');
    // The operator's log says why this caller got WORKING (a warning: lost replies should be rare).
    const warned = new RegExp(`"level":40,[^\\n]*"attempt":"${task.id}"[^\\n]*reply lost`);
    await until(async () => (warned.test(world.baton.stderrTail()) ? true : undefined), 400, 25, 'the lost-reply warning');
    // The durable follower looks the task up by the context Baton named and commits its verdict.
    const done = await until(async () => {
      const t = await client.getTask({ tenant: '', id: task.id });
      return t.status?.state === TaskState.TASK_STATE_COMPLETED ? t : undefined;
    }, 400, 25, 'the follower\'s verdict');
    expect(outcomeOf(done!)).toMatchObject({ outcome: 'succeeded', verified: true });
    const log = await world.agents.dropper!.log();
    expect((log.counts.SendMessage ?? 0) + (log.counts.SendStreamingMessage ?? 0)).toBe(1);
    expect(log.counts.ListTasks ?? 0).toBeGreaterThanOrEqual(1);
    const store = world.store();
    try {
      const [attempt] = (await attemptsOf(store, 'dropper')).filter((a) => a.attempt_id === task.id);
      expect((await store.ledger.reservation(attempt!.reservation_id))?.status).toBe('settled');
    } finally {
      await store.close();
    }
  });

  it('a delegatee that never answers: the caller gets a WORKING task, the effect stays held, and after the follow-up bound it is unknown, not failed', async () => {
    const client = await world.client('silent');
    const task = (await client.sendMessage(send('anyone?'))) as Task;
    expect(task.id).toMatch(/^att_/);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const log = await world.agents.silent!.log();
    expect((log.counts.SendMessage ?? 0) + (log.counts.SendStreamingMessage ?? 0)).toBe(1);
    const store = world.store();
    try {
      const mine = async () => (await attemptsOf(store, 'silent')).find((a) => a.attempt_id === task.id);
      expect(['held', 'unknown']).toContain((await store.ledger.reservation((await mine())!.reservation_id))?.status);
      const closed = await until(async () => ((await mine())?.state === 'closed' ? mine() : undefined), 600, 25, 'the follow-up deadline');
      expect(closed!.outcome).toBe('unknown');
      expect((await store.ledger.reservation(closed!.reservation_id))?.status).toBe('unknown');
      // Still one effect at the agent: Baton never retried it.
      const after = await world.agents.silent!.log();
      expect((after.counts.SendMessage ?? 0) + (after.counts.SendStreamingMessage ?? 0)).toBe(1);
    } finally {
      await store.close();
    }
  }, 30_000);

  it('refuses callers without valid credentials before any A2A processing', async () => {
    const res = await world.fetch(`${world.url}/agents/honest/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: {} }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/Bearer/);
    const refused = (await res.json()) as { id: null; error: { code: number; data: Array<Record<string, unknown>> } };
    expect(refused.error.code).toBe(-32052);
    expect(refused.error.data).toEqual([{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'AUTHENTICATION_REQUIRED', domain: 'baton', metadata: { baton: 'authentication_required' } }]);
    const rest = await world.fetch(`${world.url}/agents/honest/a2a/rest/message:send`, { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0' }, body: '{}' });
    expect(rest.status).toBe(401);
    expect(rest.headers.get('content-type')).toBe('application/a2a+json; charset=utf-8');
    expect(((await rest.json()) as { error: { status: string; details: Array<{ reason: string }> } }).error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED', details: [{ reason: 'AUTHENTICATION_REQUIRED' }] });
    const sends = async () => {
      const c = (await world.agents.honest!.log()).counts;
      return (c.SendMessage ?? 0) + (c.SendStreamingMessage ?? 0);
    };
    const before = await sends();
    const bad = await world.client('honest', { key: 'wrong-key' });
    await expectBatonCode(bad.sendMessage(send('x')), 'authentication_required');
    const wrong = await fetch(`${world.url}/agents/honest/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': 'wrong-key' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'y' }] } } }),
    });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: { code: number } }).error.code).toBe(-32052);
    expect(await sends()).toBe(before);
  });

  it("never lets a caller read another caller's task or a remote id", async () => {
    const client = await world.client('honest');
    const store = world.store();
    const attempts = await attemptsOf(store, 'honest');
    await store.close();
    const remoteIds = attempts.map((a) => a.remote.task_id).filter((id): id is string => typeof id === 'string');
    expect(remoteIds.length).toBeGreaterThan(0);
    await expect(client.getTask({ tenant: '', id: 'att_doesnotexist' })).rejects.toBeInstanceOf(TaskNotFoundError);
    for (const id of remoteIds) await expect(client.getTask({ tenant: '', id })).rejects.toBeInstanceOf(TaskNotFoundError);
  });
});

describe('revocation while a child task runs', () => {
  it('revoking the root through the CLI cancels the running remote task and the outcome is not succeeded', async () => {
    const client = await world.client('honest');
    const run = await streamActingAtWorking(client, send('slow work please'), async (root) => {
      const out = await batonCli(['control', 'revoke', root, '--reason', 'e2e: parent revoked mid-task'], { BATON_SQLITE_PATH: `${world.dir}/baton.db`, BATON_LOG_LEVEL: 'silent' });
      expect(out.code).toBe(0);
    });
    expect(run.acted).toBe(true);
    expect(run.finalState).not.toBe(TaskState.TASK_STATE_COMPLETED);
    const log = await world.agents.honest!.log();
    expect(log.counts.CancelTask ?? 0).toBeGreaterThanOrEqual(1);
  }, 60_000);
});


describe('the owner quota on issuance', () => {
  it('settled tasks give their root back: a 2-root preset runs any number of tasks one after another', async () => {
    const client = await world.client('honest', { key: TINY_KEY });
    for (let i = 0; i < 4; i++) expect(((await client.sendMessage(send(`task ${i}`))) as Task).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('refuses a third task while two streams of a 2-root preset are still running', async () => {
    const client = await world.client('honest', { key: TINY_KEY });
    const running = [client.sendMessageStream(send('slow one')), client.sendMessageStream(send('slow two'))];
    const firsts = await Promise.all(running.map(async (it) => (await it.next()).value));
    expect(firsts.every((ev) => ev?.payload?.$case === 'task')).toBe(true);
    expect((await expectBatonCode(client.sendMessage(send('one too many')), 'limit_exceeded')).message).toMatch(/active-root limit/);
    await Promise.all(running.map((it) => it.return(undefined)));
  }, 60_000);
});

describe('baton reconcile', () => {
  it('never re-labels a disputed outcome from the agent\'s own reads; an operator resolution settles and the task shows it', async () => {
    const env = { BATON_SQLITE_PATH: `${world.dir}/baton.db`, BATON_KEYS_DIR: `${world.dir}/keys`, BATON_LOG_LEVEL: 'silent', BATON_CONFIG: `${world.dir}/baton.json` };
    const client = await world.client('liar');
    const lie = (await client.sendMessage(send('lie again'))) as Task;
    const before = world.store();
    const liarAttempt = (await attemptsOf(before, 'liar')).find((a) => a.attempt_id === lie.id)!;
    await before.close();
    const out = await batonCli(['reconcile'], env);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    // RW-003 §7.1/§9: the liar's GetTask agrees with itself (FAILED twice), but its claim said COMPLETED: a dispute.
    expect(out.stdout).toMatch(new RegExp(`${liarAttempt.reservation_id}\\s+\\w+\\s+disputed: claimed TASK_STATE_COMPLETED`));
    const still = world.store();
    try {
      expect(['held', 'unknown']).toContain((await still.ledger.reservation(liarAttempt.reservation_id))?.status);
    } finally {
      await still.close();
    }
    const manual = await batonCli(['reconcile', '--resolve', liarAttempt.reservation_id, '--as', 'consumed', '--note', 'confirmed with the partner out of band'], env);
    expect(manual.stdout).toContain(`${liarAttempt.reservation_id}  settled`);
    const after = world.store();
    try {
      expect((await after.ledger.reservation(liarAttempt.reservation_id))?.status).toBe('settled');
    } finally {
      await after.close();
    }
    // The task an operator settled shows it: no longer WORKING forever.
    const shown = await client.getTask({ tenant: '', id: lie.id });
    expect(shown.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(outcomeOf(shown).verified).toBe(false);
  }, 60_000);
});

describe('what callers receive', () => {
  it('no response body any caller received in this suite names a delegatee task/context id or the contract extension', async () => {
    await assertNoDownstreamLeaks(world);
  });
});
