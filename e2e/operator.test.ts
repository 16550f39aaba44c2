/**
 * Every operator action through both doors — the operator API and the CLI —
 * against a real gateway and real agents, plus the automatic breakers.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { base64url, createRemoteJWKSet, decodeProtectedHeader, flattenedVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollUntil } from './harness/process.ts';
import { assertNoDownstreamLeaks } from './gateway/leaks.ts';
import { expectRpcCode } from './gateway/errors.ts';
import { API_KEY, startWorld, type World } from './gateway/world.ts';
import { baton as batonCli } from '../test/cli/run.ts';
import type { AttemptBody } from '../src/attempts/record.ts';

const OPS_KEY = 'e2e-operator-key-not-a-secret';
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
let world: World;
let env: Record<string, string>;
/** The operator's webhook: every escalation arrives here, signed by Baton. */
const hooked: Array<{ headers: Record<string, string | string[] | undefined>; body: string }> = [];
let hook: Server;

beforeAll(async () => {
  hook = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => {
      hooked.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const webhookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/ops`;
  world = await startWorld({
    agents: { steady: { behaviour: 'honest', stepMs: 20 }, flaky: { behaviour: 'honest', stepMs: 20 }, target: { behaviour: 'honest', stepMs: 20 } },
    presets: [{ id: 'standard', maxInvocations: 5 }],
    config: {
      operators: [{ id: 'ops', apiKeySha256: sha256(OPS_KEY) }],
      admin: { port: 0, webhookUrl },
      revocationSweepMs: 100,
      breakers: { repeatedFailures: 2 },
      push: { allowHttp: true, allowAddresses: ['127.0.0.0/8'], intervalMs: 50 },
    },
  });
  env = { BATON_CONFIG: world.configFile, BATON_LOG_LEVEL: 'silent' };
}, 90_000);
afterAll(async () => {
  await world?.close();
  await new Promise<void>((r) => hook?.close(() => r()));
});

async function admin<T = Record<string, unknown>>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const res = await fetch(`${world.adminUrl}${path}`, { method, headers: { 'content-type': 'application/json', 'x-api-key': OPS_KEY }, ...(body ? { body: JSON.stringify(body) } : {}) });
  return { status: res.status, json: (await res.json()) as T };
}
let rpcId = 0;
async function send(agent: string, text: string, immediately = false) {
  const res = await world.fetch(`${world.url}/agents/${agent}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': API_KEY, 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] }, ...(immediately ? { configuration: { returnImmediately: true } } : {}) } }),
  });
  return (await res.json()) as { result?: { task: { id: string; status: { state: string }; metadata: Record<string, { outcome: string }> } }; error?: { code: number; message: string; data?: unknown[] } };
}
type Audit = { attempt: { body: AttemptBody }; events: Array<{ event_type: string; produced_records: unknown[] }> };
const audit = async (id: string) => (await admin<Audit>('GET', `/admin/attempts/${id}`)).json;
const cardOf = async (agent: string) => {
  const ok = await send(agent, 'who are you');
  return (await audit(ok.result!.task.id)).attempt.body.remote.card_ref.object_id;
};

describe('operator actions, API and CLI', () => {
  it('trip (CLI) a breaker on an agent: the running task stops with the breaker as cause, is checkpointed, escalated; reset (API) lets work through again', async () => {
    const card = await cardOf('target');
    const running = (await send('target', 'slow work', true)).result!.task.id;
    const out = await batonCli(['breaker', 'trip', `agent:${card}`, '--trigger', 'operator', '--reason', 'suspicious output'], env);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/checkpoints: cp_/);
    const stopped = await pollUntil(async () => (await audit(running)).attempt.body, (b) => b.state === 'closed', { polls: 200, what: 'the running task stopped' });
    expect(stopped.cancel_cause?.cause).toBe('breaker');
    expect(stopped.outcome).toBe('cancelled');
    expect((await audit(running)).events.some((e) => e.event_type === 'rw003.execution.checkpointed')).toBe(true);
    expectRpcCode((await send('target', 'blocked?')).error, 'context_invalidated'); // new effects are blocked
    const esc = (await admin<Array<{ body: { kind: string; subject: { scope?: string } } }>>('GET', '/admin/escalations?state=open')).json;
    expect(esc.some((e) => e.body.kind === 'breaker_tripped' && e.body.subject.scope === `agent:${card}`)).toBe(true);
    expect((await admin('POST', `/admin/breakers/agent/${card}/reset`, { reason: 'checked' })).status).toBe(200);
    expect((await send('target', 'works again')).result?.task.status.state).toBe('TASK_STATE_COMPLETED');

    // The operator's webhook got the escalation, signed by Baton (checkable with Baton's JWKS alone).
    const got = await pollUntil(async () => hooked.find((h) => h.body.includes('breaker_tripped') && h.body.includes(card)), (h) => h !== undefined, { polls: 200, what: 'escalation webhook' });
    const [prot, , sig] = String(got!.headers['baton-signature']).split('.');
    await flattenedVerify({ protected: prot!, payload: base64url.encode(got!.body), signature: sig! }, createRemoteJWKSet(new URL(`${world.url}/.well-known/jwks.json`)), { algorithms: ['ES256', 'EdDSA'] });
    expect(decodeProtectedHeader({ protected: prot! })).toMatchObject({ baton_delivery: got!.headers['baton-delivery-id'], baton_aud: expect.stringMatching(/\/ops$/) });
    expect(JSON.parse(got!.body).escalation.body).toMatchObject({ kind: 'breaker_tripped', subject: { scope: `agent:${card}` }, state: 'open' });
  });

  it('trip (API) and reset (CLI); unknown triggers and scopes are refused', async () => {
    const card = await cardOf('target');
    expect((await admin('POST', `/admin/breakers/agent/${card}/trip`, { trigger: 'operator', reason: 'drill' })).status).toBe(200);
    expectRpcCode((await send('target', 'blocked')).error, 'context_invalidated');
    const reset = await batonCli(['breaker', 'reset', `agent:${card}`, '--reason', 'drill over'], env);
    expect(reset.code, reset.stderr).toBe(0);
    expect((await send('target', 'open')).result?.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect((await admin('POST', `/admin/breakers/agent/${card}/trip`, { trigger: 'because', reason: 'x' })).status).toBe(400);
    expect((await admin('POST', '/admin/breakers/agent/card_nobody/trip', { trigger: 'operator', reason: 'x' })).status).toBe(400);
    expect((await admin('POST', `/admin/breakers/agent/${card}/trip`, { trigger: 'operator', reason: 'x', extra: 1 })).status).toBe(400);
  });

  it('repeated tool failures trip the agent breaker automatically', async () => {
    const card = await cardOf('flaky');
    for (let i = 0; i < 2; i++) expect((await send('flaky', 'please fail')).result?.task.metadata['urn:baton:outcome:v2']?.outcome).toBe('failed');
    await pollUntil(async () => (await admin<Array<{ body: { kind: string; subject: { scope?: string }; reasons: string[] } }>>('GET', '/admin/escalations')).json, (l) => l.some((e) => e.body.subject.scope === `agent:${card}` && e.body.reasons.some((r) => r.includes('repeated_tool_failure'))), { polls: 100, what: 'automatic trip' });
    expectRpcCode((await send('flaky', 'now blocked')).error, 'context_invalidated');
    await admin('POST', `/admin/breakers/agent/${card}/reset`, { reason: 'fixed upstream' });
    expect((await send('flaky', 'fine')).result?.task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('card lifecycle (API suspend, CLI activate), delegation suspend/resume/revoke/amend (API and CLI)', async () => {
    const card = await cardOf('steady');
    expect((await admin('POST', `/admin/cards/${card}/lifecycle`, { lifecycle: 'suspended', reason: 'operator review' })).status).toBe(200);
    expectRpcCode((await send('steady', 'refused')).error, 'context_invalidated');
    const act = await batonCli(['card-lifecycle', card, 'active', '--reason', 'review done'], env);
    expect(act.code, act.stderr).toBe(0);
    expect((await send('steady', 'ok')).result?.task.status.state).toBe('TASK_STATE_COMPLETED');

    const slow = (await send('steady', 'slow task', true)).result!.task.id;
    const d = (await audit(slow)).attempt.body.delegation_ref.object_id;
    const amended = await admin<{ contract_revision: string }>('POST', `/admin/delegations/${d}/amend`, { reason: 'fewer invocations', terms: { budget_ceilings: [{ name: 'invocations', unit: 'invocation', ceiling: '2' }] } });
    expect(amended.status, JSON.stringify(amended.json)).toBe(200);
    const wider = await admin<{ error: { code: string } }>('POST', `/admin/delegations/${d}/amend`, { reason: 'more', terms: { budget_ceilings: [{ name: 'invocations', unit: 'invocation', ceiling: '50' }] } });
    expect(wider.json.error.code).toBe('deny'); // amendments only narrow
    const cliAmend = await batonCli(['control', 'amend', d, '--terms', '{"budget_ceilings":[{"name":"invocations","unit":"invocation","ceiling":"1"}]}', '--reason', 'narrower still'], env);
    expect(cliAmend.code, cliAmend.stderr).toBe(0);
    // The amendments moved D's head: the running task's fences are stale, so it is stopped.
    const stopped = await pollUntil(async () => (await audit(slow)).attempt.body, (b) => b.state === 'closed', { polls: 200, what: 'amended task stopped' });
    expect(stopped.cancel_cause?.cause).toBe('operator');
    expect((await admin('POST', `/admin/delegations/${d}/revoke`, { reason: 'done with it' })).status).toBe(200);
    expect((await admin<{ error: { code: string } }>('POST', '/admin/delegations/dlg_nope/revoke', { reason: 'x' })).status).toBe(400);
  });

  it('trees, attempt audit and checkpoints, escalations and their acknowledgement, deliveries and audit verify — API and CLI', async () => {
    const t = (await send('steady', 'for the record')).result!.task.id;
    const trees = (await admin<Array<{ root: string; tree: { balances: unknown[] }; attempts: Array<{ attempt_id: string; outcome?: string }> }>>('GET', '/admin/trees')).json;
    expect(trees.some((r) => r.attempts.some((a) => a.attempt_id === t && a.outcome === 'succeeded') && r.tree.balances.length > 0)).toBe(true);
    expect((await batonCli(['trees', '--limit', '50'], env)).stdout).toContain(t);
    const cliAudit = JSON.parse((await batonCli(['attempt', 'audit', t, '--json'], env)).stdout) as { revisions: unknown[]; input_message: unknown; reservation: { status: string } };
    expect(cliAudit.revisions.length).toBeGreaterThanOrEqual(2);
    expect(cliAudit.reservation.status).toBe('settled');
    expect(JSON.stringify(cliAudit.input_message)).toContain('for the record'); // stored apart from the record (README "Data retention")
    const cp = await batonCli(['attempt', 'checkpoint', t, '--reason', 'for the file'], env);
    expect(cp.stdout).toMatch(/^cp_\S+ \(sequence 1\) next safe action: none/);
    const esc = (await admin<Array<{ record_id: string }>>('GET', '/admin/escalations?state=open')).json;
    expect(esc.length).toBeGreaterThan(0);
    expect((await admin<{ body: { state: string } }>('POST', `/admin/escalations/${esc[0]!.record_id}/acknowledge`, { note: 'seen' })).json.body.state).toBe('acknowledged');
    const ack = await batonCli(['escalations', 'ack', esc[1]?.record_id ?? esc[0]!.record_id, '--note', 'seen too'], env);
    expect(ack.stdout).toContain('acknowledged');
    expect((await admin('GET', '/admin/push/deliveries?status=dead')).status).toBe(200);
    const verify = await admin<{ break_count: number; records_checked: number }>('POST', '/admin/audit/verify');
    expect(verify.json).toMatchObject({ break_count: 0 });
    expect(verify.json.records_checked).toBeGreaterThan(10);
    expect((await batonCli(['audit', 'verify'], env)).code).toBe(0);
  });
});

describe('what callers receive', () => {
  it('no response body any caller received in this suite names a delegatee task/context id or the contract extension', async () => {
    await assertNoDownstreamLeaks(world);
  });
});
