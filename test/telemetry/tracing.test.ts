/**
 * OpenTelemetry tracing on a real gateway (issue #17), exported to an
 * in-memory exporter: one `baton.request` span per delegated call with a
 * child per step of the request path, the delegatee receiving a W3C
 * traceparent of the same trace (parented by the forward and read-back
 * spans), a caller's trace continued, and no secret or content in any
 * attribute.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../../e2e/agents/agent.ts';
import { Config } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startGateway, type Gateway } from '../../src/main.ts';
import { until } from '../helpers/until.ts';

const CALLER_KEY = 'tracing-caller-key-not-a-secret';
const TEXT = 'tracing message content that must not be an attribute';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const exporter = new InMemorySpanExporter();
let dir: string;
let gw: Gateway;
let echo: RunningAgent;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wt17a-tracing-'));
  echo = await startAgent({ behaviour: 'honest', name: 'echo' });
  writeFileSync(join(dir, 'echo.jwks.json'), JSON.stringify(echo.jwks));
  gw = await startGateway(
    Config.parse({
      port: 0,
      dataDir: dir,
      tracing: { enabled: true, serviceName: 'baton-test' },
      callers: [{ id: 'planner', apiKeySha256: sha(CALLER_KEY), preset: 'standard' }],
      delegatees: [{ id: 'echo', cardUrl: `${echo.url}/.well-known/agent-card.json`, allowHttp: true }],
      trust: { pinnedJwks: { [echo.url]: join(dir, 'echo.jwks.json') }, jkuAllowedOrigins: [] },
    }),
    { logger: createLogger({ level: 'silent' }), spanExporter: exporter },
  );
});
afterAll(async () => {
  await gw?.close();
  await echo?.close();
  rmSync(dir, { recursive: true, force: true });
});

const send = (id: string, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}/agents/echo/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': CALLER_KEY, ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: id, role: 'ROLE_USER', parts: [{ text: TEXT }] } } }),
  }).then((r) => r.json() as Promise<{ result?: { task?: { id: string; status: { state: string } } }; error?: unknown }>);

interface AgentRequest {
  method: string;
  traceparent?: string;
  messageMetadata?: unknown;
}
const agentLog = async () => ((await (await fetch(`${echo.url}/_test/log`)).json()) as { requests: AgentRequest[] }).requests;
const SENDS = ['SendMessage', 'SendStreamingMessage'];
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
/** The finished spans of one trace, once its request span has ended. */
const traceOf = (traceId: () => string | undefined): Promise<ReadableSpan[]> =>
  until<ReadableSpan[] | undefined>(() => {
    const id = traceId();
    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === id);
    return spans.some((s) => s.name === 'baton.request') && spans.some((s) => s.name === 'baton.verdict') ? spans : undefined;
  }, 250, 20, 'the trace of the delegated call') as Promise<ReadableSpan[]>;

describe('tracing', () => {
  it('one request span with a child per step, and the delegatee gets a traceparent of the same trace', async () => {
    exporter.reset();
    const r = await send('m-trace-1');
    expect(r.result?.task?.status.state).toBe('TASK_STATE_COMPLETED');
    const request = () => exporter.getFinishedSpans().find((s) => s.name === 'baton.request' && s.attributes['baton.delegatee'] === 'echo');
    const spans = await traceOf(() => request()?.spanContext().traceId);
    const root = spans.find((s) => s.name === 'baton.request')!;
    const traceId = root.spanContext().traceId;
    expect(parentOf(root)).toBeUndefined();
    expect(root.attributes).toMatchObject({ 'baton.binding': 'jsonrpc', 'baton.delegatee': 'echo', 'baton.caller': 'planner', 'http.response.status_code': 200 });

    const children = spans.filter((s) => parentOf(s) === root.spanContext().spanId).map((s) => s.name);
    for (const step of ['baton.authenticate', 'baton.admit', 'baton.forward', 'baton.read_back', 'baton.verdict']) expect(children).toContain(step);
    const step = (name: string) => spans.find((s) => s.name === name)!;
    const attemptId = r.result!.task!.id;
    for (const name of ['baton.admit', 'baton.forward', 'baton.read_back', 'baton.verdict']) {
      expect(step(name).attributes['baton.attempt_id'], name).toBe(attemptId);
      expect(step(name).attributes['baton.delegatee'], name).toBe('echo');
    }
    expect(step('baton.verdict').attributes['baton.outcome']).toBe('succeeded');
    expect(step('baton.read_back').attributes['baton.read_back']).toBe('task');

    // W3C trace context: the send (a stream: the card offers one) is parented by the forward span, the GetTask by the read-back span.
    const log = await agentLog();
    const sendReq = log.find((q) => SENDS.includes(q.method) && q.traceparent?.includes(traceId));
    expect(sendReq?.traceparent).toBe(`00-${traceId}-${step('baton.forward').spanContext().spanId}-01`);
    const getReq = log.find((q) => q.method === 'GetTask' && q.traceparent?.includes(traceId));
    expect(getReq?.traceparent).toBe(`00-${traceId}-${step('baton.read_back').spanContext().spanId}-01`);

    // Ids only: no secret and no message content in any attribute.
    const attributes = JSON.stringify(spans.map((s) => s.attributes));
    expect(attributes).not.toContain(CALLER_KEY);
    expect(attributes).not.toContain(TEXT);
    expect(root.resource.attributes['service.name']).toBe('baton-test');
  });

  it("continues the caller's trace from its traceparent", async () => {
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const r = await send('m-trace-2', { traceparent: `00-${callerTrace}-00f067aa0ba902b7-01` });
    expect(r.result?.task?.status.state).toBe('TASK_STATE_COMPLETED');
    const spans = await traceOf(() => callerTrace);
    const root = spans.find((s) => s.name === 'baton.request')!;
    expect(parentOf(root)).toBe('00f067aa0ba902b7');
    expect((await agentLog()).some((q) => SENDS.includes(q.method) && q.traceparent?.startsWith(`00-${callerTrace}-`))).toBe(true);
  });

  it('a refused credential ends the request span with the authenticate span failed by its ADR-0014 code', async () => {
    exporter.reset();
    await send('m-trace-3', { 'x-api-key': 'wrong-tracing-key-value' });
    const spans = (await until<ReadableSpan[] | undefined>(() => {
      const all = exporter.getFinishedSpans();
      return all.some((s) => s.name === 'baton.request') ? all : undefined;
    }, 250, 20, 'request span'))!;
    const auth = spans.find((s) => s.name === 'baton.authenticate')!;
    expect(auth.attributes['baton.error_code']).toBe('authentication_required');
    expect(spans.find((s) => s.name === 'baton.request')!.attributes['http.response.status_code']).toBe(401);
    expect(spans.some((s) => s.name === 'baton.admit')).toBe(false);
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain('wrong-tracing-key-value');
  });
});
