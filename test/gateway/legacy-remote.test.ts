/**
 * VersionedRemoteClient (src/gateway/legacy-remote.ts): a v0.3 call is
 * translated by the SDK's compatibility layer but sent — and its failures
 * classified — by Baton's own client, so outcome projection sees the same
 * not-transmitted / lost / refused distinctions as for v1.0.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEGACY_VERSION, VersionedRemoteClient } from '../../src/gateway/legacy-remote.ts';
import { RemoteFailure, RemoteRpcError } from '../../src/gateway/remote.ts';
import { parseSse, type SseEvent } from '../../src/gateway/sse.ts';

const seen: Array<{ url: string; version: string | undefined; body: { id: unknown; method: string; params: Record<string, unknown> } }> = [];
let answer: (body: { id: unknown }) => unknown = () => ({});
let server: Server;
let base: string;
const remote = new VersionedRemoteClient({ limits: { headersTimeoutMs: 2000, bodyTimeoutMs: 2000 } });
const v03 = { 'a2a-version': LEGACY_VERSION };

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as (typeof seen)[number]['body'];
      seen.push({ url: req.url ?? '', version: req.headers['a2a-version'] as string | undefined, body });
      const a = answer(body);
      if (Array.isArray(a)) res.writeHead(200, { 'content-type': 'text/event-stream' }).end(a.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join(''));
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(a));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  await remote.close();
});

const v03Task = { kind: 'task', id: 'remote-task-1', contextId: 'remote-ctx-1', status: { state: 'completed' }, artifacts: [{ artifactId: 'a', parts: [{ kind: 'text', text: 'done' }] }] };

describe('VersionedRemoteClient', () => {
  it('sends SendMessage as v0.3 message/send and answers in v1.0 wire JSON', async () => {
    answer = (b) => ({ jsonrpc: '2.0', id: b.id, result: v03Task });
    const result = await remote.call(`${base}/rpc`, 'SendMessage', { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }], metadata: { k: 'v' } } }, { headers: v03 });
    const sent = seen.at(-1)!;
    expect(sent.version).toBe('0.3');
    expect(sent.body.method).toBe('message/send');
    expect(sent.body.params.message).toMatchObject({ kind: 'message', role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'hi' }], metadata: { k: 'v' } });
    expect(result).toMatchObject({ task: { id: 'remote-task-1', contextId: 'remote-ctx-1', status: { state: 'TASK_STATE_COMPLETED' }, artifacts: [{ artifactId: 'a', parts: [{ text: 'done' }] }] } });
  });

  it('GetTask is tasks/get; a v1.0 call without the marker stays v1.0', async () => {
    answer = (b) => ({ jsonrpc: '2.0', id: b.id, result: v03Task });
    await remote.call(`${base}/rpc`, 'GetTask', { id: 'remote-task-1' }, { headers: v03, readBack: true });
    expect(seen.at(-1)!.body).toMatchObject({ method: 'tasks/get', params: { id: 'remote-task-1' } });
    answer = (b) => ({ jsonrpc: '2.0', id: b.id, result: { id: 't' } });
    await remote.call(`${base}/rpc`, 'GetTask', { id: 't' });
    expect(seen.at(-1)).toMatchObject({ version: '1.0', body: { method: 'GetTask' } });
  });

  it('a delegatee A2A error keeps its code; a v1.0-only method is method-not-found, nothing sent', async () => {
    answer = (b) => ({ jsonrpc: '2.0', id: b.id, error: { code: -32001, message: 'Task not found' } });
    const err = await remote.call(`${base}/rpc`, 'GetTask', { id: 'x' }, { headers: v03 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RemoteRpcError);
    expect((err as RemoteRpcError).code).toBe(-32001);
    const before = seen.length;
    const list = await remote.call(`${base}/rpc`, 'ListTasks', {}, { headers: v03 }).catch((e: unknown) => e);
    expect((list as RemoteRpcError).code).toBe(-32601);
    expect(seen.length).toBe(before);
  });

  it('a refused connection is not transmitted; an answer outside v0.3 is delivered-but-malformed', async () => {
    const closed = await remote.call('http://127.0.0.1:9/rpc', 'SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } }, { headers: v03 }).catch((e: unknown) => e);
    expect(closed).toBeInstanceOf(RemoteFailure);
    expect((closed as RemoteFailure).transmitted).toBe(false);
    answer = (b) => ({ jsonrpc: '2.0', id: b.id, result: { kind: 'nonsense' } });
    const odd = await remote.call(`${base}/rpc`, 'SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } }, { headers: v03 }).catch((e: unknown) => e);
    expect(odd).toBeInstanceOf(RemoteFailure);
    expect((odd as RemoteFailure).transmitted).toBe(true);
  });

  it('a v0.3 stream is read strictly once: its events reach the follower framed, in v1.0 form, not as bytes to parse again', async () => {
    const status = { kind: 'status-update', taskId: 'remote-task-1', contextId: 'remote-ctx-1', status: { state: 'working' }, final: false };
    answer = (b) => [{ jsonrpc: '2.0', id: b.id, result: status }, { jsonrpc: '2.0', id: b.id, result: v03Task }];
    const res = await remote.stream(`${base}/rpc`, 'SendStreamingMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } }, v03);
    expect(seen.at(-1)!.body.method).toBe('message/stream');
    const events: SseEvent[] = [];
    for await (const ev of parseSse(res.body as AsyncIterable<Uint8Array>)) events.push(ev);
    expect(events.map((e) => e.envelope)).toMatchObject([
      { jsonrpc: '2.0', id: 'SendStreamingMessage', result: { statusUpdate: { taskId: 'remote-task-1', status: { state: 'TASK_STATE_WORKING' } } } },
      { jsonrpc: '2.0', id: 'SendStreamingMessage', result: { task: { id: 'remote-task-1', status: { state: 'TASK_STATE_COMPLETED' } } } },
    ]);
    // The text each event counts as against the turn's bounds is exactly its envelope.
    for (const e of events) expect(JSON.parse(e.data)).toEqual(e.envelope);
  });

  it('a v0.3 event that is not strict JSON never reaches the translator', async () => {
    answer = () => ['{"jsonrpc":"2.0","id":1,"id":2,"result":{}}'];
    const res = await remote.stream(`${base}/rpc`, 'SendStreamingMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } }, v03).catch((e: unknown) => e);
    expect(res).toBeInstanceOf(RemoteFailure);
    expect((res as RemoteFailure).reason).toBe('stream event is not strict JSON');
  });
});
