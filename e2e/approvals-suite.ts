/**
 * Human gates end to end (RW-003 §6, ADR-0014): a real Baton process in
 * front of real @a2a-js/sdk agents, approvals through the operator API and
 * the CLI, and a second in-process node on the same store for what must be
 * timed between approval and admission (fence moved, approval expired,
 * second use). Every refusal is asserted by its ADR-0014 code and rule, and
 * "nothing forwarded" by the agent's own request log.
 */
import { createHash, randomUUID } from 'node:crypto';
import { writeFileSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Role, TaskState, type Message, type StreamResponse, type Task as SdkTask } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textPart } from './agents/card.ts';
import { pollUntil } from './harness/process.ts';
import { API_KEY, startWorld, type World } from './gateway/world.ts';
import { otherOrgGateway } from './gateway/other-org.ts';
import { baton as batonCli } from '../test/cli/run.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { startGateway, type Gateway } from '../src/main.ts';
import { isBatonError } from '../src/errors.ts';
import { operatorActorRef } from '../src/contracts/identities.ts';
import { ApprovalDesk } from '../src/operator/approvals.ts';
import { systemClock } from '../src/records/time.ts';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const KEYS = { alice: 'alice-key-not-a-secret', bob: 'bob-key-not-a-secret', mallory: 'mallory-key-not-a-secret', dave: 'dave-key-not-a-secret' } as const;
type Op = keyof typeof KEYS;

/** The suite, on the store `storeConfig` names (undefined: the default SQLite file). */
export function approvalsSuite(name: string, storeConfig: () => Promise<Record<string, unknown> | undefined>): void {
  let world: World;
  let env: Record<string, string>;
  /** A second node on the same store, in this process: it admits approved effects when the test says so (sweepNow). */
  let node2: Gateway | undefined;
  /** node2's own approvals sweep; the property its sweep timer calls admits nothing (secondNode). */
  let node2Sweep: Gateway['dispatcher']['sweepApprovals'] | undefined;
  const hooked: Array<{ task?: { id: string; status: { state: string } } }> = [];
  let hook: Server;

  beforeAll(async () => {
    hook = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => {
        hooked.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    const store = await storeConfig();
    world = await startWorld({
      agents: { gated: { behaviour: 'honest', stepMs: 10 }, t4: { behaviour: 'honest', stepMs: 10 }, free: { behaviour: 'honest', stepMs: 10 } },
      presets: [{ id: 'standard', maxInvocations: 50 }],
      delegatees: { gated: { requireApproval: true }, t4: { requireApproval: 'T4_consequential_execute' } },
      config: {
        operators: Object.entries(KEYS).map(([id, key]) => ({ id, apiKeySha256: sha256(key) })),
        admin: { port: 0 },
        // Slow sweeps; and no gateway's timer admits an approval (BATON_E2E_APPROVALS_SWEEP below, secondNode): one
        // recorded by the CLI is admitted when this test says so (sweepNow), not by chance. 60 s alone was chance: a
        // suite running past a minute met the serving gateway's pass between an approval and the test's next look.
        revocationSweepMs: 60_000,
        ...(store ? { store } : {}),
        push: { allowHttp: true, allowAddresses: ['127.0.0.0/8'], intervalMs: 50 },
        approvals: {
          // dave approves but is not a reviewer: `reviewer` must be explicit (issue 25 item 4).
          approvers: [{ operator: 'alice', reviewer: true }, { operator: 'bob', reviewer: true }, { operator: 'mallory', principal: 'planner', reviewer: true }, { operator: 'dave' }],
          approvalSeconds: 300,
        },
      },
      env: { BATON_E2E_APPROVALS_SWEEP: 'off' },
    });
    env = { BATON_CONFIG: world.configFile, BATON_LOG_LEVEL: 'silent' };
    // Started before any request: a node announcing its own card (its own URL) moves Baton's agent head, which requests fence.
    await secondNode();
  }, 120_000);
  afterAll(async () => {
    await node2?.close();
    await world?.close();
    await new Promise<void>((r) => hook?.close(() => r()));
  });

  async function admin<T = Record<string, unknown>>(as: Op, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; json: T }> {
    const res = await fetch(`${world.adminUrl}${path}`, { method, headers: { 'content-type': 'application/json', 'x-api-key': KEYS[as] }, ...(body ? { body: JSON.stringify(body) } : {}) });
    return { status: res.status, json: (await res.json()) as T };
  }
  type Task = { id: string; contextId: string; status: { state: string; message?: { parts: Array<{ text?: string }> } }; metadata: Record<string, Record<string, string>> };
  let rpcId = 0;
  async function rpc(agent: string, method: string, params: unknown): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string; data?: Array<{ metadata?: { baton?: string } }> } }> {
    const res = await world.fetch(`${world.url}/agents/${agent}/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': API_KEY, 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }),
    });
    return (await res.json()) as never;
  }
  const msg = (text: string, extra: Record<string, unknown> = {}) => ({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra });
  async function sendGated(agent: string, text: string, configuration?: Record<string, unknown>): Promise<Task> {
    const r = await rpc(agent, 'SendMessage', { message: msg(text), ...(configuration ? { configuration } : {}) });
    expect(r.error, JSON.stringify(r.error)).toBeUndefined();
    return (r.result as { task: Task }).task;
  }
  const getTask = async (id: string, agent = 'gated') => ((await rpc(agent, 'GetTask', { id })).result as Task);
  const sends = async (agent: string) => (await world.agents[agent]!.log()).counts.SendMessage ?? 0;
  type Detail = { preview_digest: string; state: string; preview: { message_digest: string; rendering: string; delegatee: { id: string; card_digest: string }; scope: unknown; budget: unknown; expires_at: string } };
  const show = async (id: string) => (await admin<Detail>('alice', 'GET', `/admin/approvals/${id}`)).json;
  type ErrorJson = { error: { code: string; details: { rule?: string } } };

  async function secondNode(): Promise<Gateway> {
    if (!node2) {
      node2 = await startGateway(loadConfig({ file: world.configFile, env: {} }), { logger: createLogger({ level: 'silent' }) });
      node2Sweep = node2.dispatcher.sweepApprovals.bind(node2.dispatcher);
      node2.dispatcher.sweepApprovals = async () => 0; // what its timer calls
    }
    return node2;
  }

  /** This organisation's approvals sweep, now, on node2: the only sweep that admits in this suite. */
  async function sweepNow(): Promise<number> {
    await secondNode();
    return node2Sweep!(() => undefined);
  }

  describe(`human gates (RW-003 §6, ADR-0014) on ${name}`, () => {
    it('holds a gated SendMessage in AUTH_REQUIRED with nothing forwarded, tells its webhook, and completes once approved', async () => {
      const before = await sends('gated');
      const webhook = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
      const task = await sendGated('gated', 'pay invoice 42', { taskPushNotificationConfig: { url: webhook, token: 'integrator-token' } });
      expect(task.status.state).toBe('TASK_STATE_AUTH_REQUIRED');
      expect(task.status.message!.parts[0]!.text).toMatch(/named human authority.*nothing was forwarded/);
      expect(task.metadata['urn:baton:approval:v1']).toMatchObject({ state: 'pending', tier: 'T3_consequential_propose' });
      expect(await sends('gated')).toBe(before);
      expect((await getTask(task.id)).status.state).toBe('TASK_STATE_AUTH_REQUIRED');
      await pollUntil(async () => hooked, (h) => h.some((n) => n.task?.id === task.id && n.task.status.state === 'TASK_STATE_AUTH_REQUIRED'), { what: 'AUTH_REQUIRED pushed' });

      const d = await show(task.id);
      expect(d.state).toBe('pending');
      expect(d.preview.delegatee.id).toBe('gated');
      expect(d.preview.delegatee.card_digest).toMatch(/^sha256:/);
      expect(d.preview.rendering).toMatch(/^\[0\] text: "pay invoice 42"\nmessage: \{"messageId":"[^"]+","role":"ROLE_USER"\}$/);
      expect(d.preview.scope).toBeDefined();
      expect(d.preview.budget).toEqual([expect.objectContaining({ name: 'invocations' })]);
      const listed = (await admin<Array<{ task_id: string }>>('bob', 'GET', '/admin/approvals?state=pending')).json;
      expect(listed.some((a) => a.task_id === task.id)).toBe(true);

      const ok = await admin<{ admission: { attempt_id: string }; decision: { body: { approver: { principal_id: string }; preview_digest: string } } }>('alice', 'POST', `/admin/approvals/${task.id}/approve`, { previewDigest: d.preview_digest, note: 'invoice checked' });
      expect(ok.status, JSON.stringify(ok.json)).toBe(200);
      expect(ok.json.admission.attempt_id).toBe(task.id); // the caller's task id is the attempt's
      expect(ok.json.decision.body).toMatchObject({ approver: { principal_id: 'alice' }, preview_digest: d.preview_digest });
      const done = await pollUntil(() => getTask(task.id), (t) => t.status.state === 'TASK_STATE_COMPLETED', { polls: 400, what: 'approved task completed' });
      expect(done.metadata['urn:baton:outcome:v2']?.outcome).toBe('succeeded');
      expect(await sends('gated')).toBe(before + 1);
      await pollUntil(async () => hooked, (h) => h.some((n) => n.task?.id === task.id && n.task.status.state === 'TASK_STATE_COMPLETED'), { what: 'COMPLETED pushed' });

      // The PermissionDecision binds the AuthorityDecision; the attempt carries the approval.
      const audit = (await admin<{ decision: { body: Record<string, unknown> }; attempt: { body: { approval?: unknown } } }>('alice', 'GET', `/admin/attempts/${task.id}`)).json;
      expect(audit.decision.body.authority_decision_ref).toMatchObject({ object_id: expect.stringMatching(/^ad_/) });
      expect(audit.attempt.body.approval).toMatchObject({ tier: 'T3_consequential_propose' });

      // A second use of the same approval (another node trying to admit it again) is refused; nothing more is sent.
      const n2 = await secondNode();
      expect((await show(task.id)).state).toBe('admitted'); // the admission committed the request's `admitted` revision
      const again = await n2.dispatcher.resumeApproved(task.id).catch((e: unknown) => e);
      expect(isBatonError(again, 'context_invalidated') && again.details.rule).toBe('approval_used');
      expect(await sends('gated')).toBe(before + 1);
    });

    it('deny: REJECTED, nothing reaches the agent, a second decision is refused', async () => {
      const before = await sends('gated');
      const webhook = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
      const task = await sendGated('gated', 'wire 1M to account X', { taskPushNotificationConfig: { url: webhook, token: 'integrator-token' } });
      const d = await show(task.id);
      const denied = await admin('bob', 'POST', `/admin/approvals/${task.id}/deny`, { previewDigest: d.preview_digest, note: 'unknown account' });
      expect(denied.status).toBe(200);
      const t = await getTask(task.id);
      expect(t.status.state).toBe('TASK_STATE_REJECTED');
      expect(t.metadata['urn:baton:approval:v1']?.state).toBe('denied');
      await pollUntil(async () => hooked, (h) => h.some((n) => n.task?.id === task.id && n.task.status.state === 'TASK_STATE_REJECTED'), { what: 'REJECTED pushed' });
      const late = await admin<ErrorJson>('alice', 'POST', `/admin/approvals/${task.id}/approve`, { previewDigest: d.preview_digest, note: 'override' });
      expect(late.status).toBe(400);
      expect(late.json.error.details.rule).toBe('not_pending');
      expect(await sends('gated')).toBe(before);
    });

    it('the stock SDK client (JSON-RPC and HTTP+JSON, blocking and streaming) gets the held task; ListTasks shows it; CancelTask withdraws it', async () => {
      const before = await sends('gated');
      const sdkMessage = (text: string): Message => ({ messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] });
      const params = (text: string) => ({ tenant: '', message: sdkMessage(text), configuration: undefined, metadata: undefined });
      const rest = await world.client('gated', { transport: 'HTTP+JSON' });
      const held = (await rest.sendMessage(params('via rest'))) as SdkTask;
      expect(held.status?.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
      const jsonrpc = await world.client('gated');
      const events: StreamResponse[] = [];
      for await (const ev of jsonrpc.sendMessageStream(params('via stream'))) events.push(ev);
      expect(events).toHaveLength(1);
      const first = events[0]!.payload;
      expect(first?.$case === 'task' && first.value.status?.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
      const listed = (await rpc('gated', 'ListTasks', {})).result as { tasks: Task[] };
      expect(listed.tasks.filter((t) => t.id === held.id)).toHaveLength(1);
      const cancelled = (await rpc('gated', 'CancelTask', { id: held.id })).result as Task;
      expect(cancelled.status.state).toBe('TASK_STATE_CANCELED');
      const approve = await admin<ErrorJson>('alice', 'POST', `/admin/approvals/${held.id}/approve`, { previewDigest: (await show(held.id)).preview_digest, note: 'too late' });
      expect(approve.json.error.details.rule).toBe('not_pending');
      expect(await sends('gated')).toBe(before);
    });

    it('self-approval (the caller\'s own principal) and an operator who is no approver are refused with deny', async () => {
      const task = await sendGated('gated', 'approve yourself');
      const d = await show(task.id);
      const self = await admin<ErrorJson>('mallory', 'POST', `/admin/approvals/${task.id}/approve`, { previewDigest: d.preview_digest, note: 'me' });
      expect(self.status).toBe(403);
      expect(self.json.error).toMatchObject({ code: 'deny', details: { rule: 'self_approval' } });
      expect((await show(task.id)).state).toBe('pending');
    });

    it('a preview other than the request\'s exact one is refused (context_invalidated)', async () => {
      const task = await sendGated('gated', 'the real payload');
      const other = await sendGated('gated', 'another payload');
      const wrong = (await show(other.id)).preview_digest;
      const r = await admin<ErrorJson>('alice', 'POST', `/admin/approvals/${task.id}/approve`, { previewDigest: wrong, note: 'looked fine' });
      expect(r.status).toBe(409);
      expect(r.json.error).toMatchObject({ code: 'context_invalidated', details: { rule: 'preview_mismatch' } });
      const malformed = await admin<ErrorJson>('alice', 'POST', `/admin/approvals/${task.id}/approve`, { previewDigest: 'sha256:nope', note: 'x' });
      expect(malformed.json.error.code).toBe('invalid_request');
    });

    it('a follow-up turn on a gated delegatee cannot wait: interaction_required', async () => {
      const task = await sendGated('gated', 'first');
      const r = await rpc('gated', 'SendMessage', { message: msg('second', { taskId: task.id }) });
      expect(r.error?.data?.[0]?.metadata?.baton).toBe('interaction_required');
    });

    it('CLI: list (table and --json), show, deny; self-approval refused with exit 2', async () => {
      const task = await sendGated('gated', 'cli request');
      const list = await batonCli(['approvals', 'list', '--state', 'pending'], env);
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout.split('\n')[0]).toMatch(/^TASK\s+STATE\s+TIER\s+CALLER\s+DELEGATEE/);
      expect(list.stdout).toContain(task.id);
      const json = JSON.parse((await batonCli(['approvals', 'list', '--json'], env)).stdout) as Array<{ task_id: string; preview_digest: string }>;
      const digest = json.find((a) => a.task_id === task.id)!.preview_digest;
      const shown = await batonCli(['approvals', 'show', task.id], env);
      expect(shown.stdout).toContain(`preview digest  ${digest}`);
      expect(shown.stdout).toContain('[0] text: "cli request"');
      const self = await batonCli(['approvals', 'approve', task.id, '--as', 'mallory', '--preview', digest, '--note', 'mine'], env);
      expect(self.code).toBe(2);
      expect(self.stderr).toMatch(/deny: the requesting principal cannot approve its own request/);
      const help = await batonCli(['approvals', 'approve', '--help'], env);
      expect(help.stdout).toMatch(/Example:[\s\S]*baton approvals approve/);
      const before = await sends('gated');
      const denied = await batonCli(['approvals', 'deny', task.id, '--as', 'bob', '--preview', digest, '--note', 'no'], env);
      expect(denied.code, denied.stderr).toBe(0);
      expect(denied.stdout).toMatch(/denied by bob .*nothing was forwarded/);
      expect((await getTask(task.id)).status.state).toBe('TASK_STATE_REJECTED');
      expect(await sends('gated')).toBe(before);
    }, 120_000); // six CLI processes, each a cold tsx start on a shared machine

    it('CLI approve records the decision; the gateway admits it on its sweep and the task completes', async () => {
      const task = await sendGated('gated', 'cli approved');
      const digest = (await show(task.id)).preview_digest;
      const r = await batonCli(['approvals', 'approve', task.id, '--as', 'alice', '--preview', digest, '--note', 'ok'], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/approved by alice .*forwards it on its next sweep/);
      expect((await getTask(task.id)).status.state).toBe('TASK_STATE_SUBMITTED'); // approved, not yet admitted
      // Two admissions race for the one approval (two nodes' sweeps): exactly one is admitted, the other is a second use.
      const before = await sends('gated');
      const n2 = await secondNode();
      const raced = await Promise.allSettled([n2.dispatcher.resumeApproved(task.id), n2.dispatcher.resumeApproved(task.id)]);
      expect(raced.filter((r) => r.status === 'fulfilled'), raced.map((r) => (r.status === 'rejected' ? String(r.reason) + JSON.stringify(r.reason.details) : 'ok')).join(' | ')).toHaveLength(1);
      const lost = raced.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(isBatonError(lost.reason, 'context_invalidated') && lost.reason.details.rule).toBe('approval_used');
      expect(await sweepNow()).toBe(0); // nothing left to admit
      await pollUntil(() => getTask(task.id), (t) => t.status.state === 'TASK_STATE_COMPLETED', { polls: 400, what: 'CLI-approved task completed' });
      expect(await sends('gated')).toBe(before + 1);
    }, 120_000);

    it('a sweep that admits the approval between the decision and the approval action answers the approver with that admission', async () => {
      const task = await sendGated('gated', 'swept first');
      const digest = (await show(task.id)).preview_digest;
      const before = await sends('gated');
      const n2 = await secondNode();
      // The approval action's admission, preceded by a sweep: the order the serving gateway's interval can produce.
      const swept = Object.create(n2.dispatcher, {
        resumeApproved: {
          value: async (id: string) => {
            await sweepNow();
            // Admitted by this sweep: the action's admission comes second.
            expect((await n2.dispatcher.deps.gates!.byTask(id))?.body.state).toBe('admitted');
            return n2.dispatcher.resumeApproved(id);
          },
        },
      }) as typeof n2.dispatcher;
      const desk = new ApprovalDesk({ gates: n2.dispatcher.deps.gates!, dispatcher: swept, clock: systemClock });
      const r = await desk.approve(task.id, digest, 'ok', operatorActorRef('alice'));
      expect(r.admission).toEqual({ attempt_id: task.id, state: expect.any(String) });
      await pollUntil(() => getTask(task.id), (t) => t.status.state === 'TASK_STATE_COMPLETED', { polls: 400, what: 'swept task completed' });
      expect(await sends('gated')).toBe(before + 1);
    }, 120_000);

    it('a fence that moved between approval and admission refuses the admission (context_invalidated), nothing forwarded', async () => {
      const task = await sendGated('gated', 'fenced');
      const d = await show(task.id);
      expect((await batonCli(['approvals', 'approve', task.id, '--as', 'alice', '--preview', d.preview_digest, '--note', 'ok'], env)).code).toBe(0);
      // Trip and reset the agent's breaker: its head moves, its state is active again — only the approved fence can tell.
      const card = await cardOf();
      expect((await admin('alice', 'POST', `/admin/breakers/agent/${card}/trip`, { trigger: 'operator', reason: 'drill' })).status).toBe(200);
      expect((await admin('alice', 'POST', `/admin/breakers/agent/${card}/reset`, { reason: 'drill over' })).status).toBe(200);
      const before = await sends('gated');
      const err = await (await secondNode()).dispatcher.resumeApproved(task.id).catch((e: unknown) => e);
      expect(isBatonError(err, 'context_invalidated'), String(err)).toBe(true);
      expect((err as { details: { rule: string } }).details.rule).toBe('fence_moved');
      expect(await sends('gated')).toBe(before);
      const t = await getTask(task.id);
      expect(t.status.state).toBe('TASK_STATE_REJECTED');
      expect(t.metadata['urn:baton:approval:v1']).toMatchObject({ state: 'refused', code: 'context_invalidated' });
    });

    it('an approval that expired before its admission is refused (context_invalidated)', async () => {
      const task = await sendGated('gated', 'expiring');
      const d = await show(task.id);
      // The CLI decides under a configuration whose approvals last one second.
      const short = join(world.dir, 'short.json');
      const cfg = JSON.parse(readFileSync(world.configFile, 'utf8')) as { approvals: Record<string, unknown> };
      writeFileSync(short, JSON.stringify({ ...cfg, approvals: { ...cfg.approvals, approvalSeconds: 1 } }));
      const r = await batonCli(['approvals', 'approve', task.id, '--as', 'alice', '--preview', d.preview_digest, '--note', 'ok', '--json'], { ...env, BATON_CONFIG: short });
      expect(r.code, r.stderr).toBe(0);
      const expires = Date.parse((JSON.parse(r.stdout) as { decision: { body: { expires_at: string } } }).decision.body.expires_at);
      await pollUntil(async () => Date.now(), (now) => now > expires + 50, { polls: 400, intervalMs: 25, what: 'approval expiry' });
      const before = await sends('gated');
      const err = await (await secondNode()).dispatcher.resumeApproved(task.id).catch((e: unknown) => e);
      expect(isBatonError(err, 'context_invalidated') && err.details.rule).toBe('approval_expired');
      expect(await sends('gated')).toBe(before);
    });

    it('T4: verified success waits for an independent reviewer before it is projected succeeded', async () => {
      const task = await sendGated('t4', 'execute transfer');
      expect(task.metadata['urn:baton:approval:v1']?.tier).toBe('T4_consequential_execute');
      const d = (await admin<Detail>('alice', 'GET', `/admin/approvals/${task.id}`)).json;
      expect((await admin('alice', 'POST', `/admin/approvals/${task.id}/approve`, { previewDigest: d.preview_digest, note: 'go' })).status).toBe(200);
      const waiting = await pollUntil(async () => (await admin<{ attempt: { body: { state: string; review?: { state: string }; outcome?: string } } }>('alice', 'GET', `/admin/attempts/${task.id}`)).json, (a) => a.attempt?.body.state === 'closed', { polls: 400, what: 'T4 verdict' });
      expect(waiting.attempt.body.review?.state).toBe('pending');
      expect(waiting.attempt.body.outcome).toBeUndefined();
      expect((await getTask(task.id, 't4')).status.state).toBe('TASK_STATE_WORKING');
      const byApprover = await admin<ErrorJson>('alice', 'POST', `/admin/approvals/${task.id}/review`, { decision: 'approve', note: 'me again' });
      expect(byApprover.json.error).toMatchObject({ code: 'deny', details: { rule: 'reviewer_not_independent' } });
      const byCaller = await admin<ErrorJson>('mallory', 'POST', `/admin/approvals/${task.id}/review`, { decision: 'approve', note: 'mine' });
      expect(byCaller.json.error).toMatchObject({ code: 'deny', details: { rule: 'self_review' } });
      // An approver without `reviewer: true` is no reviewer, through the CLI as through the API.
      const byApproverOnly = await batonCli(['approvals', 'review', task.id, '--as', 'dave', '--decision', 'approve', '--note', 'looks done'], env);
      expect(byApproverOnly.code, byApproverOnly.stdout).toBe(2);
      expect(byApproverOnly.stderr).toMatch(/deny: this operator is not a configured reviewer/);
      expect((await admin<ErrorJson>('dave', 'POST', `/admin/approvals/${task.id}/review`, { decision: 'approve', note: 'x' })).json.error).toMatchObject({ code: 'deny', details: { rule: 'not_a_reviewer' } });
      expect((await getTask(task.id, 't4')).status.state).toBe('TASK_STATE_WORKING');
      const reviewed = await admin<{ outcome: string }>('bob', 'POST', `/admin/approvals/${task.id}/review`, { decision: 'approve', note: 'read-back matches' });
      expect(reviewed.status, JSON.stringify(reviewed.json)).toBe(200);
      expect(reviewed.json.outcome).toBe('succeeded');
      const t = await getTask(task.id, 't4');
      expect(t.status.state).toBe('TASK_STATE_COMPLETED');
      const twice = await admin<ErrorJson>('bob', 'POST', `/admin/approvals/${task.id}/review`, { decision: 'deny', note: 'changed my mind' });
      expect(twice.json.error.details.rule).toBe('no_review_pending');
    }, 120_000); // one CLI process (a cold tsx start)

    it('the preview shows everything forwarded, escaped; request-level configuration is not kept to forward (issue 25 item 18)', async () => {
      const r = await rpc('gated', 'SendMessage', { message: msg('pay 1 EUR\n[1] text: to \u202Eaccount 7', { metadata: { beneficiary: 'acct-9' } }), configuration: { acceptedOutputModes: ['text/plain'], historyLength: 3 } });
      const task = (r.result as { task: Task }).task;
      const d = (await admin<Detail & { task: { history: Array<Record<string, unknown>> } }>('alice', 'GET', `/admin/approvals/${task.id}`)).json;
      const lines = d.preview.rendering.split('\n');
      expect(lines[0]).toBe('[0] text: "pay 1 EUR\\n[1] text: to \\u202eaccount 7"');
      expect(lines[1]).toMatch(/^message: \{"messageId":"[^"]+","metadata":\{"beneficiary":"acct-9"\},"role":"ROLE_USER"\}$/);
      expect(lines).toHaveLength(2);
      expect(d.preview.rendering).not.toContain('\u202E');
      {
        const st = (await secondNode()).store;
        const body = (await st.getRecord(`apr_${task.id.replace(/^att_/, '')}`))!.body as Record<string, unknown>;
        expect(JSON.stringify(body)).not.toContain('account 7'); // the message is kept apart (issue 25 item 16)
        const params = JSON.parse((await st.content.get(body.params_digest as string))!.document!) as Record<string, unknown>;
        expect(Object.keys(params)).toEqual(['message']);
      }
    });

    it('ungated delegatees are untouched, and audit verify covers every approval record', async () => {
      expect((await rpc('free', 'SendMessage', { message: msg('plain') })).result).toMatchObject({ task: { status: { state: 'TASK_STATE_COMPLETED' } } });
      const audit = await admin<{ break_count: number; breaks: unknown[]; records_checked: number }>('alice', 'POST', '/admin/audit/verify');
      expect(audit.json.records_checked).toBeGreaterThan(0);
      expect(audit.json.breaks ?? [], JSON.stringify(audit.json)).toEqual([]);
      const cli = await batonCli(['audit', 'verify'], env);
      expect(cli.code, cli.stdout + cli.stderr).toBe(0);
    });

    it('a retention purge takes a held request\'s message: the approval record and its detail no longer show it, and nothing can be forwarded (issue 25 item 16)', async () => {
      const task = await sendGated('gated', 'wire 5,000 to acct 123-secret');
      const digest = (await show(task.id)).preview_digest;
      const purge = await batonCli(['retention', 'purge', '--before', new Date().toISOString(), '--json'], env);
      expect(purge.code, purge.stderr).toBe(0);
      const d = (await admin<Detail & { task: unknown }>('alice', 'GET', `/admin/approvals/${task.id}`)).json;
      expect(d.preview_digest).toBe(digest); // the records and their digests stay
      expect(d.preview.rendering).toBe('(purged by retention: the message is no longer held)');
      expect(JSON.stringify(d)).not.toContain('acct 123');
      const before = await sends('gated');
      const ok = await admin<{ admission: { error: { code: string; details: { rule: string } } } }>('alice', 'POST', `/admin/approvals/${task.id}/approve`, { previewDigest: digest, note: 'looks fine' });
      expect(ok.json.admission.error).toMatchObject({ code: 'context_invalidated', details: { rule: 'request_changed' } });
      expect(await sends('gated')).toBe(before);
      const audit = await batonCli(['audit', 'verify'], env);
      expect(audit.code, audit.stdout + audit.stderr).toBe(0);
    }, 120_000); // two CLI processes

    it("another organisation's gateway on the same store neither sweeps up nor admits this gateway's approved request", async () => {
      // Started first: announcing its cards moves heads that a request fences (as secondNode).
      const other = await otherOrgGateway(world.configFile, 'other');
      try {
        const task = await sendGated('gated', 'for this organisation only');
        expect((await batonCli(['approvals', 'approve', task.id, '--as', 'alice', '--preview', (await show(task.id)).preview_digest, '--note', 'ok'], env)).code).toBe(0);
        const before = await sends('gated');
        const errors: string[] = [];
        expect(await other.dispatcher.sweepApprovals((id) => errors.push(id))).toBe(0);
        expect(errors).toEqual([]);
        await expect(other.dispatcher.resumeApproved(task.id)).rejects.toMatchObject({ code: 'invalid_request', message: 'no such approval request' });
        expect((await show(task.id)).state).toBe('approved');
        expect(await sends('gated')).toBe(before);
        await sweepNow(); // this gateway's own sweep admits it
        await pollUntil(() => getTask(task.id), (t) => t.status.state === 'TASK_STATE_COMPLETED', { polls: 400, what: 'own sweep admitted it' });
      } finally {
        await other.close();
      }
    }, 120_000); // one CLI process
  });

  /** The gated agent's card id, from an approved attempt's audit. */
  async function cardOf(): Promise<string> {
    const done = (await admin<Array<{ task_id: string; delegatee_id: string }>>('alice', 'GET', '/admin/approvals?state=admitted')).json.find((a) => a.delegatee_id === 'gated')!;
    const a = (await admin<{ attempt: { body: { remote: { card_ref: { object_id: string } } } } }>('alice', 'GET', `/admin/attempts/${done.task_id}`)).json;
    return a.attempt.body.remote.card_ref.object_id;
  }
}
