/**
 * Prometheus metrics on a real gateway (issue #17): scrape `/metrics` on the
 * operator listener before and after real delegated calls and assert that
 * the specific series moved — admissions, outcomes, upstream latencies, a
 * refusal by its ADR-0014 code, a read-back disagreement — and that the
 * gauges read from the store show the unknown reservation it left behind.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../../e2e/agents/agent.ts';
import { Config } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startGateway, type Gateway } from '../../src/main.ts';
import { until } from '../helpers/until.ts';
import { sample, scrape } from './prom-text.ts';
import { expectRpcA2A, expectRpcCode, expectRpcInvalid } from '../../e2e/gateway/errors.ts';

const OPERATOR_KEY = 'metrics-operator-key-not-a-secret';
const CALLER_KEY = 'metrics-caller-key-not-a-secret';
const EXTRA_KEY = 'metrics-extra-key-not-a-secret';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
let dir: string;
let gw: Gateway;
let echo: RunningAgent;
let liar: RunningAgent;
let slow: RunningAgent;
let refuser: RunningAgent;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wt17a-metrics-'));
  [echo, liar, slow] = await Promise.all([startAgent({ behaviour: 'honest', name: 'echo' }), startAgent({ behaviour: 'lying-readback', name: 'liar' }), startAgent({ behaviour: 'honest', name: 'slow', stepMs: 5_000 })]);
  refuser = await startAgent({ behaviour: 'refuse-sends', name: 'refuser' });
  for (const [name, a] of [['echo', echo], ['liar', liar], ['slow', slow], ['refuser', refuser]] as const) writeFileSync(join(dir, `${name}.jwks.json`), JSON.stringify(a.jwks));
  const base = {
      port: 0,
      dataDir: dir,
      operators: [{ id: 'ops', apiKeySha256: sha(OPERATOR_KEY) }],
      admin: { port: 0 },
      revocationSweepMs: 50,
      breakers: { repeatedFailures: 2 },
      presets: [{ id: 'standard', maxInvocations: 50 }],
      callers: [{ id: 'planner', apiKeySha256: sha(CALLER_KEY), preset: 'standard' }],
      delegatees: [
        { id: 'echo', cardUrl: `${echo.url}/.well-known/agent-card.json`, allowHttp: true },
        { id: 'liar', cardUrl: `${liar.url}/.well-known/agent-card.json`, allowHttp: true },
        { id: 'slow', cardUrl: `${slow.url}/.well-known/agent-card.json`, allowHttp: true },
        { id: 'refuser', cardUrl: `${refuser.url}/.well-known/agent-card.json`, allowHttp: true },
      ],
      trust: { pinnedJwks: { [echo.url]: join(dir, 'echo.jwks.json'), [liar.url]: join(dir, 'liar.jwks.json'), [slow.url]: join(dir, 'slow.jwks.json'), [refuser.url]: join(dir, 'refuser.jwks.json') }, jkuAllowedOrigins: [] },
  };
  // The configuration a reload reads: one more delegatee and one more preset (with its own caller).
  const reloaded = Config.parse({
    ...base,
    presets: [...base.presets, { id: 'extra', maxInvocations: 7 }],
    callers: [...base.callers, { id: 'extra-caller', apiKeySha256: sha(EXTRA_KEY), preset: 'extra' }],
    delegatees: [...base.delegatees, { id: 'echo2', cardUrl: `${echo.url}/.well-known/agent-card.json`, allowHttp: true }],
  });
  gw = await startGateway(Config.parse(base), { logger: createLogger({ level: 'silent' }), reread: () => ({ config: reloaded, source: 'test', problems: [] }) });
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([echo?.close(), liar?.close(), slow?.close(), refuser?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const send = (delegatee: string, text: string, key = CALLER_KEY, configuration?: object) =>
  fetch(`${gw.url}/agents/${delegatee}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': key },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: `m-${text}`, role: 'ROLE_USER', parts: [{ text }] }, ...(configuration ? { configuration } : {}) } }),
  }).then((r) => r.json() as Promise<{ result?: { task?: { id: string; status: { state: string } } }; error?: { code: number; data?: unknown[] } }>);

const metrics = () => scrape(`${gw.adminUrl}/metrics`);

describe('/metrics', () => {
  it('is served on the operator listener without an operator key, in the Prometheus text format', async () => {
    const res = await fetch(`${gw.adminUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toMatch(/^# HELP baton_admissions_total /m);
    expect(text).toMatch(/^# TYPE baton_upstream_duration_seconds histogram$/m);
    // The operator routes beside it still need a key.
    expect((await fetch(`${gw.adminUrl}/admin/trees`)).status).toBe(401);
    // Not on the A2A front door.
    expect((await fetch(`${gw.url}/metrics`)).status).toBe(404);
  });

  it('a delegated success moves admissions, outcomes, upstream and request latencies, and the budget consumed', async () => {
    const before = await metrics();
    const r = await send('echo', 'hello metrics');
    expect(r.error).toBeUndefined();
    expect(r.result?.task?.status.state).toBe('TASK_STATE_COMPLETED');
    const after = await metrics();
    const delta = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('baton_admissions_total', { delegatee: 'echo', operation: 'a2a.SendMessage' })).toBe(1);
    expect(delta('baton_outcomes_total', { outcome: 'succeeded', delegatee: 'echo' })).toBe(1);
    expect(delta('baton_upstream_duration_seconds_count', { call: 'send', delegatee: 'echo', result: 'ok' })).toBe(1);
    expect(delta('baton_upstream_duration_seconds_count', { call: 'read_back', delegatee: 'echo', result: 'ok' })).toBe(1);
    expect(delta('baton_request_duration_seconds_count', { binding: 'jsonrpc' })).toBe(1);
    expect(delta('baton_budget_consumed', { preset: 'standard', dimension: 'invocations' })).toBe(1);
    expect(sample(after, 'baton_budget_ceiling', { preset: 'standard', dimension: 'invocations' })).toBe(50);
    expect(sample(after, 'baton_budget_remaining', { preset: 'standard', dimension: 'invocations' })).toBe(50 - sample(after, 'baton_budget_consumed', { preset: 'standard', dimension: 'invocations' }));
    expect(sample(after, 'baton_store_gauges_up', {})).toBe(1);
  });

  it('a refused call counts under its ADR-0014 code and delegatee, and admits nothing', async () => {
    const before = await metrics();
    const r = await send('echo', 'no entry', 'wrong-key-for-metrics-test');
    expectRpcCode(r.error, 'authentication_required');
    const after = await metrics();
    const delta = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('baton_refusals_total', { code: 'authentication_required', delegatee: 'echo', binding: 'jsonrpc' })).toBe(1);
    expect(delta('baton_admissions_total', { delegatee: 'echo', operation: 'a2a.SendMessage' })).toBe(0);
    expect(after.join('\n')).not.toContain('wrong-key-for-metrics-test');
  });

  it('a request the path refuses (malformed SendMessage) counts as invalid_request', async () => {
    const before = await metrics();
    const res = await fetch(`${gw.url}/agents/echo/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-api-key': CALLER_KEY },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'SendMessage', params: { message: { messageId: 'm-bad', role: 'ROLE_USER', parts: [] } } }),
    });
    expectRpcInvalid(((await res.json()) as { error?: unknown }).error, 'SendMessage request is malformed: message.parts: Too small: expected array to have >=1 items');
    const after = await metrics();
    expect(sample(after, 'baton_refusals_total', { code: 'invalid_request', delegatee: 'echo', binding: 'jsonrpc' }) - sample(before, 'baton_refusals_total', { code: 'invalid_request', delegatee: 'echo', binding: 'jsonrpc' })).toBe(1);
    expect(sample(after, 'baton_admissions_total', { delegatee: 'echo', operation: 'a2a.SendMessage' }) - sample(before, 'baton_admissions_total', { delegatee: 'echo', operation: 'a2a.SendMessage' })).toBe(0);
  });

  it('an unknown delegatee in the path never becomes a label value', async () => {
    await fetch(`${gw.url}/agents/task-1234-not-configured/a2a/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': CALLER_KEY }, body: '{}' });
    const text = (await metrics()).join('\n');
    expect(text).not.toContain('task-1234-not-configured');
  });

  it('a read-back that disagrees is counted, and the unknown reservation and escalation it leaves show in the store gauges', async () => {
    const before = await metrics();
    const r = await send('liar', 'tell me the truth');
    expect(r.error).toBeUndefined();
    const after = await metrics();
    const delta = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('baton_readback_disagreements_total', { delegatee: 'liar' })).toBe(1);
    expect(delta('baton_outcomes_total', { outcome: 'unknown', delegatee: 'liar' })).toBe(1);
    expect(delta('baton_reservations_unresolved', { status: 'unknown' })).toBe(1);
    expect(sample(after, 'baton_reservation_oldest_age_seconds', { status: 'unknown' })).toBeGreaterThanOrEqual(0);
    expect(delta('baton_escalations_open', {})).toBe(1);
    expect(sample(after, 'baton_active_roots', { preset: 'standard' })).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'baton_outbox_dead_letters', {})).toBe(0);
  });
});

describe('revocation propagation', () => {
  it('the sweep stopping a running attempt after a revocation is observed with its propagation time', async () => {
    const before = await metrics();
    const r = await send('slow', 'take your time', CALLER_KEY, { returnImmediately: true });
    const id = r.result!.task!.id;
    const root = ((await gw.store.getRecord(id))!.body as { root_ref: { object_id: string } }).root_ref.object_id;
    const revoke = await fetch(`${gw.adminUrl}/admin/delegations/${root}/revoke`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': OPERATOR_KEY }, body: JSON.stringify({ reason: 'metrics test: revoke a running task' }) });
    expect(revoke.status).toBe(200);
    const labels = { cause: 'revocation' };
    const after = (await until<string[] | undefined>(async () => {
      const m = await metrics();
      return sample(m, 'baton_revocation_propagation_seconds_count', labels) > sample(before, 'baton_revocation_propagation_seconds_count', labels) ? m : undefined;
    }, 400, 25, 'the sweep to stop the revoked attempt'))!;
    expect(sample(after, 'baton_revocation_propagation_seconds_count', labels) - sample(before, 'baton_revocation_propagation_seconds_count', labels)).toBe(1);
    expect(sample(after, 'baton_revocation_propagation_seconds_sum', labels)).toBeGreaterThanOrEqual(0);
    expect(sample(after, 'baton_revocation_propagation_seconds_bucket', { ...labels, le: '+Inf' })).toBeGreaterThanOrEqual(1);
  }, 30_000);
});

describe('breakers', () => {
  it('repeated failed sends trip the delegatee\'s breaker once, counted by scope kind and trigger', async () => {
    const labels = { scope_kind: 'agent', trigger: 'repeated_tool_failure' };
    const before = await metrics();
    // The refuser's own A2A error is relayed by its meaning, never its text (src/gateway/a2a-error.ts relayed()).
    for (const text of ['refuse me', 'refuse me again']) expectRpcA2A((await send('refuser', text)).error, 'unsupported', 'the delegatee refused the request (A2A error -32004)');
    const after = (await until<string[] | undefined>(async () => {
      const m = await metrics();
      return sample(m, 'baton_breaker_trips_total', labels) > sample(before, 'baton_breaker_trips_total', labels) ? m : undefined;
    }, 400, 25, 'the breaker trip'))!;
    expect(sample(after, 'baton_breaker_trips_total', labels) - sample(before, 'baton_breaker_trips_total', labels)).toBe(1);
    expect(sample(after, 'baton_outcomes_total', { outcome: 'failed', delegatee: 'refuser' }) - sample(before, 'baton_outcomes_total', { outcome: 'failed', delegatee: 'refuser' })).toBe(2);
    expect(sample(after, 'baton_upstream_duration_seconds_count', { call: 'send', delegatee: 'refuser', result: 'error' }) - sample(before, 'baton_upstream_duration_seconds_count', { call: 'send', delegatee: 'refuser', result: 'error' })).toBe(2);
    // The next send is refused at admission: the tripped agent stream is a stale fence (ADR-0014 context_invalidated).
    expectRpcCode((await send('refuser', 'after the trip')).error, 'context_invalidated');
    expect(sample(await metrics(), 'baton_refusals_total', { code: 'context_invalidated', delegatee: 'refuser', binding: 'jsonrpc' })).toBeGreaterThanOrEqual(1);
  }, 30_000);
});

describe('/metrics without operators', () => {
  it('starts the operator listener for metrics alone when metrics.enabled is true', async () => {
    const d = mkdtempSync(join(tmpdir(), 'wt17a-metrics-noop-'));
    const g = await startGateway(Config.parse({ port: 0, dataDir: d, admin: { port: 0 }, metrics: { enabled: true } }), { logger: createLogger({ level: 'silent' }) });
    try {
      expect(g.adminUrl).toBeDefined();
      expect((await fetch(`${g.adminUrl}/metrics`)).status).toBe(200);
      expect((await fetch(`${g.adminUrl}/admin/trees`)).status).toBe(401);
    } finally {
      await g.close();
      rmSync(d, { recursive: true, force: true });
    }
  });

  it('after a reload, a delegatee and a preset it added are label values like the configured ones (not `other`)', async () => {
    expect(await gw.reload()).toMatchObject({ applied: true, changed: expect.arrayContaining([expect.stringMatching(/^delegatees: \+echo2/), 'callers', 'presets']) });
    const before = await metrics();
    const r = await send('echo2', 'reloaded', EXTRA_KEY);
    expect(r.result?.task?.status.state).toBe('TASK_STATE_COMPLETED');
    const after = await metrics();
    expect(sample(after, 'baton_admissions_total', { delegatee: 'echo2', operation: 'a2a.SendMessage' }) - sample(before, 'baton_admissions_total', { delegatee: 'echo2', operation: 'a2a.SendMessage' })).toBe(1);
    expect(sample(after, 'baton_outcomes_total', { outcome: 'succeeded', delegatee: 'other' })).toBe(0);
    expect(sample(after, 'baton_budget_ceiling', { preset: 'extra', dimension: 'invocations' })).toBe(7);
  });
});
