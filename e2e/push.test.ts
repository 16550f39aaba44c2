/**
 * Push notifications end to end: real SDK delegatees that notify (honestly,
 * lying, forging, signing or not at all), a real Baton process, and a real
 * integrator receiver that verifies every delivery with Baton's JWKS alone.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollUntil, spawnIntegrator, spawnReady, type ReadyProcess, type SpawnedIntegrator } from './harness/process.ts';
import type { DeliveryRecord } from './integrator/receiver.ts';
import { assertNoDownstreamLeaks } from './gateway/leaks.ts';
import { expectRpcCode } from './gateway/errors.ts';
import { API_KEY, BATON_MAIN, startWorld, type World } from './gateway/world.ts';
import { baton as batonCli } from '../test/cli/run.ts';

const TOKEN = 'integrator-token-not-a-secret';
let world: World;
let integrator: SpawnedIntegrator;
let restarted: ReadyProcess<{ url: string }> | undefined;

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

beforeAll(async () => {
  // A fixed port: the gateway is restarted in the last test and the integrator keeps its JWKS URL.
  const port = await freePort();
  world = await startWorld({
    agents: {
      honest: { behaviour: 'honest', stepMs: 30 },
      liar: { behaviour: 'lying-readback', stepMs: 30 },
      forger: { behaviour: 'honest', stepMs: 30, pushMode: 'forge' },
      quiet: { behaviour: 'honest', stepMs: 30, pushMode: 'drop' },
      signer: { behaviour: 'honest', stepMs: 30, pushMode: 'jwt' },
      replayer: { behaviour: 'honest', stepMs: 30, pushMode: 'replay' },
      // Sends the token but no JWT, to a Baton that requires one from it.
      unsigned: { behaviour: 'honest', stepMs: 30, pushMode: 'token' },
    },
    delegatees: { signer: { inboundAuth: 'token+jwt' }, unsigned: { inboundAuth: 'token+jwt' } },
    presets: [{ id: 'standard', maxInvocations: 50, maxActiveRoots: 64 }],
    remote: { headersTimeoutMs: 4000, bodyTimeoutMs: 20_000 },
    config: {
      port,
      push: { allowHttp: true, allowAddresses: ['127.0.0.0/8'], maxAttempts: 4, backoffBaseMs: 100, backoffMaxMs: 400, deliveryTimeoutMs: 1500, intervalMs: 50, pollMs: 1000 },
    },
  });
  integrator = await spawnIntegrator({ jwksUrl: `${world.url}/.well-known/jwks.json`, token: TOKEN });
}, 90_000);

afterAll(async () => {
  await restarted?.stop();
  await integrator?.stop();
  await world?.close();
});

let rpcId = 0;
async function rpc(agent: string, method: string, params: Record<string, unknown>): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown[] } }> {
  const res = await world.fetch(`${world.url}/agents/${agent}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': API_KEY, 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }),
  });
  return (await res.json()) as never;
}

const message = (text: string) => ({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] });

/** SendMessage that returns at once, with the integrator's webhook in `configuration`. */
async function sendWithHook(agent: string, hook: string, extra: Record<string, unknown> = {}): Promise<string> {
  const out = await rpc(agent, 'SendMessage', { message: message(`push to ${agent}`), configuration: { returnImmediately: true, taskPushNotificationConfig: { url: hook, token: TOKEN, ...extra } } });
  expect(out.error).toBeUndefined();
  const task = out.result!.task as { id: string };
  expect(task.id).toMatch(/^att_/);
  return task.id;
}

const forTask = (all: DeliveryRecord[], taskId: string) => all.filter((d) => d.taskId === taskId);
const waitFor = (taskId: string, n = 1, who: SpawnedIntegrator = integrator) =>
  who.waitForDeliveries((d) => forTask(d.deliveries, taskId).filter((x) => x.valid && x.status === 200 && x.answered).length >= n, { polls: 400, intervalMs: 25, what: `deliveries for ${taskId}` });

describe('push notifications through Baton', () => {
  it("relays exactly the verified outcome, signed; the delegatee only ever sees Baton's own webhook", async () => {
    const hook = `${integrator.hookUrl}/relay`;
    const taskId = await sendWithHook('honest', hook);
    const all = forTask((await waitFor(taskId)).deliveries, taskId);
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ valid: true, kind: 'task', state: 'TASK_STATE_COMPLETED', outcome: 'succeeded', verified: true, attemptId: taskId });
    // The closing revision, for ordering against a later reconciled outcome (another delivery id).
    expect(all[0]!.batonOutcome).toMatchObject({ revisionId: expect.stringMatching(/^rev_/) });
    // The agent notified Baton's inbound webhook and nothing else; the integrator's URL never left Baton.
    const log = await world.agents.honest!.log();
    expect(log.pushes.length).toBeGreaterThan(0);
    expect(log.pushes.every((p) => p.url.startsWith(`${world.url}/push/inbound/${taskId}`) && (p.status === 202 || p.status === 200))).toBe(true);
    expect(JSON.stringify(log)).not.toContain(integrator.url);
    // Every notification has been answered by now; still exactly one delivery.
    await pollUntil(async () => (await world.agents.honest!.log()).pushes, (p) => p.some((x) => x.state === 'TASK_STATE_COMPLETED' && x.status !== null));
    expect(forTask((await integrator.deliveries()).deliveries, taskId)).toHaveLength(1);
  });

  it('Create/Get/List/Delete work on Baton task ids and never return the token or credentials', async () => {
    const send = await rpc('honest', 'SendMessage', { message: message('blocking, then subscribe') });
    const taskId = (send.result!.task as { id: string }).id;
    const created = await rpc('honest', 'CreateTaskPushNotificationConfig', { taskId, id: 'after-the-fact', url: `${integrator.hookUrl}/late`, token: TOKEN, authentication: { scheme: 'Bearer', credentials: 'cred-not-a-secret' } });
    expect(created.error).toBeUndefined();
    expect(created.result).toMatchObject({ id: 'after-the-fact', taskId, url: `${integrator.hookUrl}/late` });
    expect(JSON.stringify(created.result)).not.toMatch(/cred-not-a-secret|integrator-token/);
    const got = await rpc('honest', 'GetTaskPushNotificationConfig', { taskId, id: 'after-the-fact' });
    expect(got.result).toMatchObject({ id: 'after-the-fact', authentication: { scheme: 'Bearer' } });
    expect(JSON.stringify(got.result)).not.toMatch(/cred-not-a-secret|integrator-token/);
    // The task was already verified: registering delivers its outcome.
    expect(forTask((await waitFor(taskId)).deliveries, taskId)[0]).toMatchObject({ outcome: 'succeeded', verified: true });
    const listed = await rpc('honest', 'ListTaskPushNotificationConfigs', { taskId });
    expect((listed.result!.configs as unknown[]).length).toBe(1);
    expect((await rpc('honest', 'DeleteTaskPushNotificationConfig', { taskId, id: 'after-the-fact' })).error).toBeUndefined();
    expect((await rpc('honest', 'DeleteTaskPushNotificationConfig', { taskId, id: 'after-the-fact' })).error).toBeUndefined(); // idempotent
    expect(((await rpc('honest', 'ListTaskPushNotificationConfigs', { taskId })).result!.configs as unknown[] | undefined) ?? []).toHaveLength(0);
    expect((await rpc('honest', 'GetTaskPushNotificationConfig', { taskId, id: 'after-the-fact' })).error?.code).toBe(-32001); // TaskNotFoundError
    // Another caller's task id is not found, and a private or plain-http URL would be refused by default policy.
    expect((await rpc('honest', 'CreateTaskPushNotificationConfig', { taskId: 'att_nobody', url: integrator.hookUrl })).error?.code).toBe(-32001);
    expectRpcCode((await rpc('honest', 'CreateTaskPushNotificationConfig', { taskId, url: 'https://169.254.169.254/latest/meta-data' })).error, 'deny', { host: '169.254.169.254' });
  });

  it("a lying delegatee's pushed 'completed' is re-read and never relayed as succeeded", async () => {
    const taskId = await sendWithHook('liar', `${integrator.hookUrl}/liar`);
    const [d] = forTask((await waitFor(taskId)).deliveries, taskId);
    expect(d!.outcome).not.toBe('succeeded');
    expect(d!.verified).toBe(false);
    expect(d!.state).not.toBe('TASK_STATE_COMPLETED');
  });

  it('forged notifications are refused; the outcome still arrives, found by polling', async () => {
    const taskId = await sendWithHook('forger', `${integrator.hookUrl}/forger`);
    expect(forTask((await waitFor(taskId)).deliveries, taskId)[0]).toMatchObject({ outcome: 'succeeded', verified: true });
    const pushes = (await world.agents.forger!.log()).pushes;
    expect(pushes.length).toBeGreaterThan(0);
    expect(pushes.every((p) => p.status === 401 || p.status === null)).toBe(true);
  });

  it('a delegatee that never notifies is polled, and a replaying one changes nothing', async () => {
    const quiet = await sendWithHook('quiet', `${integrator.hookUrl}/quiet`);
    const replayed = await sendWithHook('replayer', `${integrator.hookUrl}/replayer`);
    await waitFor(quiet);
    await waitFor(replayed);
    await pollUntil(async () => (await world.agents.replayer!.log()).pushes, (p) => p.some((x) => x.send === 'replay-first' && x.status !== null));
    for (const t of [quiet, replayed]) expect(forTask((await integrator.deliveries()).deliveries, t)).toHaveLength(1);
    // Replays are answered (ignored once the task is verified, else just one more re-read).
    expect([200, 202]).toContain((await world.agents.replayer!.log()).pushes.find((x) => x.send === 'replay-first')?.status);
  });

  it('where the operator requires it, only JWT-signed notifications from the pinned card key are accepted', async () => {
    const taskId = await sendWithHook('signer', `${integrator.hookUrl}/signer`);
    await waitFor(taskId);
    const pushes = (await world.agents.signer!.log()).pushes;
    expect(pushes.some((p) => p.status === 202)).toBe(true);
    expect(pushes.every((p) => p.jwt)).toBe(true);
    // A delegatee that must sign but does not: every notification is refused; the outcome still arrives, by polling.
    const unsigned = await sendWithHook('unsigned', `${integrator.hookUrl}/unsigned`);
    expect(forTask((await waitFor(unsigned)).deliveries, unsigned)[0]).toMatchObject({ outcome: 'succeeded', verified: true });
    const refused = (await world.agents.unsigned!.log()).pushes;
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((p) => !p.jwt && (p.status === 401 || p.status === null))).toBe(true);
    expect(refused.some((p) => p.status === 401)).toBe(true);
  });

  it('retries through integrator failures under one idempotency id, and dead-letters what never lands (visible in the CLI)', async () => {
    const flaky = await spawnIntegrator({ jwksUrl: `${world.url}/.well-known/jwks.json`, token: TOKEN, failFirst: 2 });
    try {
      const taskId = await sendWithHook('honest', `${flaky.hookUrl}/flaky`);
      const all = forTask((await waitFor(taskId, 1, flaky)).deliveries, taskId);
      expect(all.map((d) => d.status)).toEqual([503, 503, 200]);
      // Same id and same body bytes at every try; each try's signature is fresh, and each one verified.
      expect(new Set(all.map((d) => d.id)).size).toBe(1);
      expect(new Set(all.map((d) => JSON.stringify(d.body))).size).toBe(1);
      expect(all.every((d) => d.valid)).toBe(true);
    } finally {
      await flaky.stop();
    }
    const nowhere = `http://127.0.0.1:${await freePort()}/hook`;
    const lost = await sendWithHook('honest', nowhere);
    const env = { BATON_CONFIG: world.configFile, BATON_LOG_LEVEL: 'silent' };
    const listing = await pollUntil(
      () => batonCli(['push', 'deliveries', '--status', 'dead', '--task', lost], env),
      (out) => out.stdout.includes(lost),
      { polls: 60, intervalMs: 100, what: 'a dead letter' },
    );
    expect(listing.stdout).toMatch(/^dlv_\S+\s+dead\s+\S+\s+\S+\s+4\s/m); // DELIVERY STATUS TASK CONFIG TRIES
    const id = /^(dlv_\S+)/m.exec(listing.stdout)![1]!;
    const deadRow = async () => (JSON.parse((await batonCli(['push', 'deliveries', '--task', lost, '--json'], env)).stdout) as Array<{ delivery_id: string; status: string; next_at: string }>)[0]!;
    const before = await deadRow();
    expect((await batonCli(['push', 'requeue', id], env)).code).toBe(0);
    // The running gateway tries it again (and, the port still being closed, dead-letters it again later).
    await pollUntil(deadRow, (r) => r.status === 'dead' && r.next_at > before.next_at, { polls: 100, intervalMs: 100, what: 'the requeued delivery retried' });
    const delivered = (JSON.parse((await batonCli(['push', 'deliveries', '--status', 'delivered', '--limit', '1', '--json'], env)).stdout) as Array<{ delivery_id: string }>)[0]!;
    const refused = await batonCli(['push', 'requeue', delivered.delivery_id], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('not dead');
  });

  it('kill -9 mid-delivery: after a restart the same delivery arrives again, same id and bytes', async () => {
    const holder = await spawnIntegrator({ jwksUrl: `${world.url}/.well-known/jwks.json`, token: TOKEN, holdFirstMs: 20_000 });
    try {
      const taskId = await sendWithHook('honest', `${holder.hookUrl}/held`);
      await holder.waitForDeliveries((d) => forTask(d.deliveries, taskId).some((x) => x.held), { polls: 400, what: 'the held delivery' });
      await world.baton.kill9();
      restarted = await spawnReady<{ url: string }>(BATON_MAIN, [world.configFile]);
      expect(restarted.ready.url).toBe(world.url);
      const all = forTask((await waitFor(taskId, 1, holder)).deliveries, taskId);
      expect(all.length).toBeGreaterThanOrEqual(2);
      expect(all[0]).toMatchObject({ held: true, answered: false });
      expect(new Set(all.map((d) => d.id)).size).toBe(1);
      expect(new Set(all.map((d) => JSON.stringify(d.body))).size).toBe(1);
      expect(all.every((d) => d.valid)).toBe(true);
    } finally {
      await holder.stop();
    }
  }, 60_000);
});

describe('what callers receive', () => {
  it('no response body any caller received in this suite names a delegatee task/context id or the contract extension', async () => {
    await assertNoDownstreamLeaks(world);
  });
});
