/**
 * Baton's A2A front door and wire on a real gateway with real SDK agents
 * (issue #25 items 6, 7, 17 and 19): what the door refuses and how it says
 * so, which version a request without `A2A-Version` is read as, the schemes
 * Baton's card declares, the strict reading of a delegatee's SSE events, the
 * nesting bound at the edge and the v0.3 file bytes.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningAgent } from '../../e2e/agents/agent.ts';
import { startAgentsGateway, type AgentsGateway } from '../helpers/agents-gateway.ts';
import type { Gateway } from '../../src/main.ts';

const CALLER_KEY = 'front-door-caller-key-not-a-secret';
const INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
let world: AgentsGateway;
let gw: Gateway;
let agents: Record<string, RunningAgent>;

beforeAll(async () => {
  world = await startAgentsGateway(
    'front-door',
    CALLER_KEY,
    {
      echo: { behaviour: 'honest', name: 'echo', stepMs: 5 },
      dup: { behaviour: 'duplicate-key-stream', name: 'dup', stepMs: 5 },
      dup03: { behaviour: 'duplicate-key-stream', name: 'dup03', stepMs: 5, protocol: '0.3' },
    },
    {
      // Small enough that a 150 KB message's read-back (history and artifact) cannot be read.
      remote: { maxResponseBytes: 256 * 1024 },
      follow: { blockingWaitMs: 1_500 },
    },
  );
  ({ gw, agents } = world);
}, 60_000);
afterAll(async () => world?.close());

const headers = (extra: Record<string, string> = {}) => ({ 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': CALLER_KEY, ...extra });
const message = (text: string, extra: Record<string, unknown> = {}) => ({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra });
const rpc = (delegatee: string, method: string, params: unknown, extra: Record<string, string> = {}) =>
  fetch(`${gw.url}/agents/${delegatee}/a2a/jsonrpc`, { method: 'POST', headers: headers(extra), body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });

describe('the wire: every byte a delegatee sends is strict JSON (item 7)', () => {
  it.each(['dup', 'dup03'])('a streamed event with a duplicate key is never relayed: Baton reads the task instead (%s)', async (delegatee) => {
    const res = await rpc(delegatee, 'SendStreamingMessage', { message: message('hello') }, { accept: 'text/event-stream' });
    const body = await res.text();
    expect(body).not.toContain('forged');
    expect(body).toContain('TASK_STATE_COMPLETED');
    const id = /"id":"(att_[a-z0-9]+)"/.exec(body)![1]!;
    const task = (await (await rpc(delegatee, 'GetTask', { id })).json()) as { result: { status: { state: string } } };
    expect(task.result.status.state).toBe('TASK_STATE_COMPLETED');
    expect(JSON.stringify(task.result)).not.toContain('forged');
  });
});

/** How many sends an agent has seen (its own request log). */
const sends = async (id: string): Promise<number> => {
  const log = (await (await fetch(`${agents[id]!.url}/_test/log`)).json()) as { counts: Record<string, number> };
  return (log.counts.SendMessage ?? 0) + (log.counts.SendStreamingMessage ?? 0);
};
/** An object nested `levels` deep (`{}` is one level). */
const nested = (levels: number): Record<string, unknown> => (levels <= 1 ? {} : { n: nested(levels - 1) });

describe('a reply Baton cannot read is uncertain, never a refusal (item 17)', () => {
  it('metadata nested so deep that its echo could not be read is refused at the edge, before anything is forwarded', async () => {
    const before = await sends('echo');
    // 61 levels of metadata: the request envelope is 64 deep, exactly what the edge parser allows.
    const res = await rpc('echo', 'SendMessage', { message: message('deep', { metadata: nested(61) }) });
    const body = (await res.json()) as { error?: { code: number; message: string } };
    expect(body.error?.code).toBe(-32602); // invalid_request
    expect(body.error?.message).toMatch(/nests deeper than 56/);
    expect(await sends('echo')).toBe(before);
  });

  it('metadata within the edge bound is forwarded and its echo read back', async () => {
    const res = await rpc('echo', 'SendMessage', { message: message('deep enough', { metadata: nested(50) }) });
    const body = (await res.json()) as { result?: { task: { status: { state: string } } } };
    expect(body.result?.task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('a read-back too large to read leaves the caller with Baton\'s task id, not a refusal', async () => {
    const res = await rpc('echo', 'SendMessage', { message: message('x'.repeat(150 * 1024)) });
    const body = (await res.json()) as { result?: { task: { id: string; status: { state: string } } }; error?: unknown };
    expect(body.error).toBeUndefined();
    expect(body.result?.task.id).toMatch(/^att_/);
    expect(body.result?.task.status.state).not.toBe('TASK_STATE_COMPLETED'); // not verified: still followed
  });
});

/** A google.rpc.Status (A2A §11.6) whose ErrorInfo names Baton's code. */
const expectStatus = async (res: Response, status: number, name: string, code: string) => {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/a2a\+json/);
  const body = (await res.json()) as { error: { code: number; status: string; message: string; details: Array<{ '@type': string; domain: string; metadata: Record<string, string> }> } };
  expect(body.error).toMatchObject({ code: status, status: name });
  expect(body.error.details.find((d) => d['@type'] === INFO && d.domain === 'baton')?.metadata.baton).toBe(code);
  return body.error;
};

describe('front-door edges (item 6)', () => {
  it('an oversize HTTP+JSON body is 413 (not 429, which invites a retry of the same bytes), still limit_exceeded', async () => {
    const res = await fetch(`${gw.url}/agents/echo/a2a/rest/message:send`, { method: 'POST', headers: headers(), body: JSON.stringify({ message: message('x'.repeat(1024 * 1024 + 10)) }) });
    await expectStatus(res, 413, 'RESOURCE_EXHAUSTED', 'limit_exceeded');
    // JSON-RPC errors travel in a 200, with the code of the table.
    const rpcRes = await fetch(`${gw.url}/agents/echo/a2a/jsonrpc`, { method: 'POST', headers: headers(), body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: message('x'.repeat(1024 * 1024 + 10)) } }) });
    expect(((await rpcRes.json()) as { error: { code: number } }).error.code).toBe(-32055);
  });

  it('an unknown path under an HTTP+JSON binding is a google.rpc.Status 404 with ErrorInfo', async () => {
    for (const path of ['/agents/echo/a2a/rest/no/such/route', '/agents/echo/a2a/rest/v1/no-such-route', '/a2a/rest/nothing:here']) {
      const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: headers(), body: '{}' });
      await expectStatus(res, 404, 'NOT_FOUND', 'invalid_request');
    }
  });

  it('a request without A2A-Version is A2A 0.3 on both bindings (A2A §3.6.1)', async () => {
    const v1 = JSON.stringify({ message: message('no version header') });
    const { 'a2a-version': _v, ...noVersion } = headers();
    const rest = await fetch(`${gw.url}/agents/echo/a2a/rest/message:send`, { method: 'POST', headers: noVersion, body: v1 });
    const error = await expectStatus(rest, 404, 'NOT_FOUND', 'invalid_request');
    expect(error.message).toMatch(/A2A-Version: 1\.0/);
    // The same v1.0 method on JSON-RPC without the header is v0.3's "method not found".
    const rpcRes = await fetch(`${gw.url}/agents/echo/a2a/jsonrpc`, { method: 'POST', headers: noVersion, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: JSON.parse(v1) }) });
    expect(((await rpcRes.json()) as { error: { code: number } }).error.code).toBe(-32601);
    // v0.3's own HTTP+JSON route, without the header, is served (as v0.3).
    const legacy = await fetch(`${gw.url}/agents/echo/a2a/rest/v1/message:send`, {
      method: 'POST',
      headers: noVersion,
      body: JSON.stringify({ message: { messageId: randomUUID(), role: 'ROLE_USER', content: [{ text: 'v0.3 by default' }] } }),
    });
    expect(legacy.ok).toBe(true);
    expect(((await legacy.json()) as { task?: { status?: { state?: string } } }).task?.status?.state).toBe('TASK_STATE_COMPLETED');
  });
});

describe("Baton's own card (item 6)", () => {
  it('declares every credential the door accepts: X-API-Key and a bearer token, either one sufficient', async () => {
    const card = (await (await fetch(`${gw.url}/.well-known/agent-card.json`)).json()) as { securitySchemes: Record<string, unknown>; securityRequirements: Array<{ schemes: Record<string, unknown> }> };
    expect(card.securitySchemes).toMatchObject({ apiKey: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' } }, bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } });
    expect(card.securityRequirements.map((r) => Object.keys(r.schemes))).toEqual([['apiKey'], ['bearer']]);
    // The key this card declares is the one the door takes.
    const res = await fetch(`${gw.url}/a2a/rest/tasks/att_none`, { headers: { 'a2a-version': '1.0', 'X-API-Key': CALLER_KEY } });
    expect(res.status).not.toBe(401);
  });
});

describe('A2A v0.3 file bytes (item 19)', () => {
  it('bytes that are not base64 are refused as invalid_request on v0.3 too, never altered and forwarded', async () => {
    const before = await sends('echo');
    const v03 = { 'content-type': 'application/json', 'a2a-version': '0.3', 'x-api-key': CALLER_KEY };
    const parts = [{ kind: 'text', text: 'see file' }, { kind: 'file', file: { bytes: 'not base64 at all!', mimeType: 'application/octet-stream' } }];
    const rpcRes = await fetch(`${gw.url}/agents/echo/a2a/jsonrpc`, { method: 'POST', headers: v03, body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'message/send', params: { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts } } }) });
    const body = (await rpcRes.json()) as { id: unknown; error?: { code: number; message: string } };
    expect(body).toMatchObject({ id: 9, error: { code: -32602 } });
    expect(body.error?.message).toMatch(/base64/);
    const rest = await fetch(`${gw.url}/agents/echo/a2a/rest/v1/message:send`, {
      method: 'POST',
      headers: v03,
      body: JSON.stringify({ message: { messageId: randomUUID(), role: 'ROLE_USER', content: [{ text: 'see file' }, { file: { fileWithBytes: 'not*base64', mimeType: 'text/plain' } }] } }),
    });
    expect(rest.status).toBe(400);
    expect(await sends('echo')).toBe(before);
  });
});
