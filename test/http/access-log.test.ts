/**
 * The access log on a real gateway: one line per request on the public and
 * operator listeners, with request id (accepted or generated, echoed back),
 * caller, delegatee, binding, method, status, ADR-0014 code and latency —
 * and never an API key or bearer token.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../../e2e/agents/agent.ts';
import { Config } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startGateway, type Gateway } from '../../src/main.ts';
import { until } from '../helpers/until.ts';

const OPERATOR_KEY = 'access-log-operator-key-not-a-secret';
const CALLER_KEY = 'access-log-caller-key-not-a-secret';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const out: string[] = [];
let dir: string;
let gw: Gateway;
let agent: RunningAgent;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'baton-access-log-'));
  agent = await startAgent({ behaviour: 'honest', name: 'echo' });
  writeFileSync(join(dir, 'echo.jwks.json'), JSON.stringify(agent.jwks));
  const destination = new Writable({ write: (chunk: Buffer, _enc, done) => (out.push(chunk.toString()), done()) });
  gw = await startGateway(
    Config.parse({
      port: 0,
      dataDir: dir,
      operators: [{ id: 'ops', apiKeySha256: sha(OPERATOR_KEY) }],
      admin: { port: 0 },
      callers: [{ id: 'planner', apiKeySha256: sha(CALLER_KEY), preset: 'standard' }],
      delegatees: [{ id: 'echo', cardUrl: `${agent.url}/.well-known/agent-card.json`, allowHttp: true }],
      trust: { pinnedJwks: { [agent.url]: join(dir, 'echo.jwks.json') }, jkuAllowedOrigins: [] },
    }),
    { logger: createLogger({ level: 'info', destination }) },
  );
});
afterAll(async () => {
  await gw?.close();
  await agent?.close();
  rmSync(dir, { recursive: true, force: true });
});

type Line = Record<string, unknown>;
const lines = (): Line[] => out.flatMap((l) => l.split('\n')).filter(Boolean).map((l) => JSON.parse(l) as Line).filter((l) => l.msg === 'request');
/** The access-log line of the request with this id, once it is written (after the response). */
const lineFor = (id: string) => until(() => lines().find((l) => l.request_id === id), 250, 20, `access log line ${id}`) as Promise<Line>;

const rpc = (path: string, body: unknown, headers: Record<string, string>) =>
  fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers }, body: JSON.stringify(body) });

describe('access log', () => {
  it('accepts a sane X-Request-Id, echoes it, and logs a health check', async () => {
    const res = await fetch(`${gw.url}/healthz`, { headers: { 'x-request-id': 'req-health.1' } });
    expect(res.headers.get('x-request-id')).toBe('req-health.1');
    const l = await lineFor('req-health.1');
    expect(l).toMatchObject({ level: 30, binding: 'health', method: 'GET /healthz', status: 200 });
    expect(typeof l.latency_ms).toBe('number');
    expect(l).not.toHaveProperty('caller');
    expect(l).not.toHaveProperty('code');
  });

  it('replaces an unsafe request id with a generated one', async () => {
    const res = await fetch(`${gw.url}/healthz`, { headers: { 'x-request-id': 'bad id\twith "quotes"' } });
    const id = res.headers.get('x-request-id')!;
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(await lineFor(id)).toMatchObject({ binding: 'health', status: 200 });
  });

  it('names caller, delegatee, binding and JSON-RPC method of a delegated call', async () => {
    const send = { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm-log-1', role: 'ROLE_USER', parts: [{ text: 'hello' }] } } };
    const res = await rpc('/agents/echo/a2a/jsonrpc', send, { 'x-api-key': CALLER_KEY, 'x-request-id': 'req-send' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { result?: unknown }).result).toBeDefined();
    expect(await lineFor('req-send')).toMatchObject({ caller: 'planner', delegatee: 'echo', binding: 'jsonrpc', method: 'SendMessage', status: 200 });
    expect(await lineFor('req-send')).not.toHaveProperty('code');
  });

  it('logs the ADR-0014 code of a refused call on each binding', async () => {
    await rpc('/agents/echo/a2a/jsonrpc', { jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: 'x' } }, { authorization: 'Bearer not-a-real-token-xyz', 'x-request-id': 'req-401-rpc' });
    // Credentials are checked before the body is read, so the line names the route, not the JSON-RPC method.
    expect(await lineFor('req-401-rpc')).toMatchObject({ delegatee: 'echo', binding: 'jsonrpc', method: 'POST /agents/:id/a2a/jsonrpc', status: 401, code: 'authentication_required' });
    const rest = await fetch(`${gw.url}/agents/echo/a2a/rest/tasks/t-123`, { headers: { 'x-api-key': 'wrong-key-value-abc', 'x-request-id': 'req-401-rest' } });
    expect(rest.status).toBe(401);
    expect(await lineFor('req-401-rest')).toMatchObject({ binding: 'rest', method: 'GET /agents/:id/a2a/rest/tasks/:id', status: 401, code: 'authentication_required' });
  });

  it('logs operator requests with the operator as caller and the route template', async () => {
    const ok = await fetch(`${gw.adminUrl}/admin/attempts/att_missing`, { headers: { 'x-api-key': OPERATOR_KEY, 'x-request-id': 'req-admin' } });
    expect(await lineFor('req-admin')).toMatchObject({ caller: 'ops', binding: 'admin', method: 'GET /admin/attempts/:id', status: ok.status });
    const refused = await fetch(`${gw.adminUrl}/admin/trees`, { headers: { 'x-request-id': 'req-admin-401' } });
    expect(refused.status).toBe(401);
    expect(await lineFor('req-admin-401')).toMatchObject({ binding: 'admin', status: 401, code: 'authentication_required' });
  });

  it('never writes an API key or bearer token', () => {
    const all = out.join('');
    for (const secret of [CALLER_KEY, OPERATOR_KEY, 'not-a-real-token-xyz', 'wrong-key-value-abc']) expect(all).not.toContain(secret);
  });
});
