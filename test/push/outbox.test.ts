import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { base64url, createLocalJWKSet, decodeProtectedHeader, flattenedVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/gateway/callers.ts';
import { guardedAgent } from '../../src/push/guarded-agent.ts';
import { Outbox, type OutboxOptions } from '../../src/push/outbox.ts';
import { PushRegistry } from '../../src/push/registry.ts';
import { SecretBox } from '../../src/push/secret-box.ts';
import type { WebhookPolicy } from '../../src/push/webhook-url.ts';
import { randomIds } from '../../src/records/ids.ts';
import { closeAttempt, openAttempt, quietLogger, receiver, world } from './support.ts';

const LOOPBACK: WebhookPolicy = { allowHttp: true, allow: ['127.0.0.0/8'] };
const caller = { id: 'planner' } as Caller;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(opts: { policy?: WebhookPolicy; retry?: Partial<OutboxOptions['retry']>; refresh?: (id: string) => Promise<void>; pollMs?: number } = {}) {
  const w = await world();
  const box = new SecretBox(Buffer.alloc(32, 3));
  let t = Date.parse('2026-12-02T10:00:00.000Z');
  const clock = { now: () => new Date(t), advance: (ms: number) => (t += ms) };
  const agent = guardedAgent(opts.policy ?? LOOPBACK, { connectTimeoutMs: 2_000 });
  const outboxOpts: OutboxOptions = {
    retry: { maxAttempts: 5, baseMs: 1_000, maxMs: 60_000, ...opts.retry },
    deliveryTimeoutMs: 2_000,
    leaseMs: 5_000,
    intervalMs: 50,
    batch: 8,
    pollMs: opts.pollMs ?? 10_000,
  };
  const outbox = new Outbox(
    { store: w.store, keyring: w.keyring, box, agent, policy: opts.policy ?? LOOPBACK, logger: quietLogger(), owner: randomIds.next('wrk'), now: clock.now, random: () => 0.5, ...(opts.refresh ? { refresh: opts.refresh } : {}) },
    outboxOpts,
  );
  const registry = new PushRegistry({ store: w.store, box, policy: LOOPBACK, ids: randomIds, outbox, maxPerTask: 3, now: clock.now });
  cleanups.push(async () => {
    await outbox.stop();
    await agent.close();
    await w.store.close();
  });
  const attempt = openAttempt();
  await w.store.putRecord(attempt);
  return { ...w, box, clock, agent, outbox, registry, attempt, outboxOpts };
}

async function hook(respond?: Parameters<typeof receiver>[0]) {
  const r = await receiver(respond);
  cleanups.push(r.close);
  return r;
}

describe('push outbox', () => {
  it('delivers a verified outcome once, signed over the exact bytes, checkable with only the JWKS; credentials never at rest in clear', async () => {
    const s = await setup();
    const r = await hook();
    const shown = await s.registry.create(caller, s.attempt, { taskId: s.attempt.record_id, url: r.url, token: 'tok-sekrit-1', authentication: { scheme: 'Bearer', credentials: 'cred-sekrit-2' } });
    expect(JSON.stringify(shown)).not.toMatch(/sekrit/);
    const closed = closeAttempt(s.attempt);
    await s.store.putRecord(closed);
    const verified = { id: 'remote-task-1', contextId: 'remote-ctx', status: { state: 'TASK_STATE_COMPLETED' }, artifacts: [{ artifactId: 'a1', parts: [{ text: 'done' }] }] };
    expect(await s.outbox.notify(closed, verified)).toBe(1);
    expect(await s.outbox.notify(closed, verified)).toBe(0); // same revision, same id: not enqueued twice
    expect(await s.outbox.drain()).toBe(1);
    expect(await s.outbox.drain()).toBe(0);

    expect(r.received).toHaveLength(1);
    const got = r.received[0]!;
    expect(got.headers['x-a2a-notification-token']).toBe('tok-sekrit-1');
    expect(got.headers.authorization).toBe('Bearer cred-sekrit-2');
    expect(got.headers['idempotency-key']).toBe(got.headers['baton-delivery-id']);
    const [protectedHeader, empty, signature] = String(got.headers['baton-signature']).split('.');
    expect(empty).toBe('');
    const jwks = createLocalJWKSet(JSON.parse(JSON.stringify(s.keyring.jwks())));
    await flattenedVerify({ protected: protectedHeader!, payload: base64url.encode(got.body), signature: signature! }, jwks, { algorithms: ['ES256', 'EdDSA'] });
    const header = decodeProtectedHeader({ protected: protectedHeader! });
    expect(header).toMatchObject({ baton_delivery: got.headers['baton-delivery-id'], baton_aud: r.url, typ: 'JOSE' });
    // A single flipped byte fails verification.
    await expect(flattenedVerify({ protected: protectedHeader!, payload: base64url.encode(got.body.replace('done', 'dona')), signature: signature! }, jwks)).rejects.toThrow();

    const body = JSON.parse(got.body);
    expect(body.task).toMatchObject({ id: s.attempt.record_id, contextId: 'ctx_1', status: { state: 'TASK_STATE_COMPLETED' }, artifacts: verified.artifacts });
    expect(body.task.metadata['urn:baton:outcome:v1']).toMatchObject({ attempt_id: s.attempt.record_id, outcome: 'succeeded', verified: true });
    expect(got.body).not.toContain('remote-task-1');

    const [row] = await s.store.push.deliveries({ task_id: s.attempt.record_id, limit: 10 });
    expect(row).toMatchObject({ status: 'delivered', attempts: 1 });
    for (const f of ['baton.db', 'baton.db-wal']) {
      const file = join(s.dir, f);
      if (existsSync(file)) expect(readFileSync(file).toString('latin1')).not.toMatch(/sekrit/);
    }
  });

  it('retries with exponential backoff and sends the same id and bytes every time', async () => {
    const s = await setup();
    const r = await hook((n) => (n <= 2 ? 503 : 200));
    await s.registry.create(caller, s.attempt, { taskId: s.attempt.record_id, url: r.url });
    await s.store.putRecord(closeAttempt(s.attempt, 'failed'));
    await s.outbox.recover();
    expect(await s.outbox.drain()).toBe(1);
    const [first] = await s.store.push.deliveries({ limit: 1, task_id: s.attempt.record_id });
    expect(first).toMatchObject({ status: 'pending', attempts: 1, last_error: 'HTTP 503' });
    // Not due yet: nothing is claimed before next_at.
    expect(await s.outbox.drain()).toBe(0);
    s.clock.advance(750); // base 1 s, equal jitter at 0.5 → 750 ms
    expect(await s.outbox.drain()).toBe(1);
    const [second] = await s.store.push.deliveries({ limit: 1, task_id: s.attempt.record_id });
    expect(Date.parse(second!.next_at) - Date.parse(first!.next_at)).toBeGreaterThanOrEqual(1_500); // the step doubled
    s.clock.advance(1_500);
    expect(await s.outbox.drain()).toBe(1);
    expect(r.received).toHaveLength(3);
    expect(new Set(r.received.map((x) => `${x.headers['baton-delivery-id']}|${x.headers['baton-signature']}|${x.body}`)).size).toBe(1);
    expect(JSON.parse(r.received[2]!.body).task.status.state).toBe('TASK_STATE_FAILED');
    expect((await s.store.push.delivery(first!.delivery_id))).toMatchObject({ status: 'delivered', attempts: 3 });
  });

  it('dead-letters after the last try; an operator requeue sends it again', async () => {
    const s = await setup({ retry: { maxAttempts: 2, baseMs: 10, maxMs: 10 } });
    let healthy = false;
    const r = await hook(() => (healthy ? 200 : 500));
    await s.registry.create(caller, s.attempt, { taskId: s.attempt.record_id, url: r.url });
    const closed = closeAttempt(s.attempt);
    await s.store.putRecord(closed);
    await s.outbox.notify(closed);
    await s.outbox.drain();
    s.clock.advance(10);
    await s.outbox.drain();
    const [dead] = await s.store.push.deliveries({ status: 'dead', limit: 5 });
    expect(dead).toMatchObject({ task_id: s.attempt.record_id, attempts: 2, last_error: expect.stringContaining('gave up after 2 tries') });
    s.clock.advance(10_000);
    expect(await s.outbox.drain()).toBe(0); // dead stays dead
    healthy = true;
    expect(await s.store.push.requeue(dead!.delivery_id, s.clock.now().toISOString())).toBe(true);
    expect(await s.outbox.drain()).toBe(1);
    expect(await s.store.push.delivery(dead!.delivery_id)).toMatchObject({ status: 'delivered' });
    expect(r.received).toHaveLength(3);
  });

  it('gives up at once on 410 Gone and on a destination the policy refuses, without retrying', async () => {
    const gone = await setup();
    const r410 = await hook(() => 410);
    await gone.registry.create(caller, gone.attempt, { taskId: gone.attempt.record_id, url: r410.url });
    await gone.store.putRecord(closeAttempt(gone.attempt));
    await gone.outbox.recover();
    await gone.outbox.drain();
    expect((await gone.store.push.deliveries({ limit: 1 }))[0]).toMatchObject({ status: 'dead', attempts: 1, last_error: 'HTTP 410' });

    // The registry accepted a loopback URL under the test policy; the outbox's strict policy refuses to connect.
    const strict = await setup({ policy: { allowHttp: true, allow: [] } });
    const r = await hook();
    await strict.registry.create(caller, strict.attempt, { taskId: strict.attempt.record_id, url: r.url });
    await strict.store.putRecord(closeAttempt(strict.attempt));
    await strict.outbox.recover();
    await strict.outbox.drain();
    expect((await strict.store.push.deliveries({ limit: 1 }))[0]).toMatchObject({ status: 'dead', attempts: 1 });
    expect(r.received).toHaveLength(0);
  });

  it('a deleted config gets nothing, even for a delivery already queued', async () => {
    const s = await setup();
    const r = await hook();
    const created = await s.registry.create(caller, s.attempt, { taskId: s.attempt.record_id, url: r.url, id: 'mine' });
    expect(created.id).toBe('mine');
    await s.store.putRecord(closeAttempt(s.attempt));
    await s.outbox.recover();
    expect(await s.registry.delete(s.attempt, 'mine')).toBe(true);
    expect(await s.registry.delete(s.attempt, 'mine')).toBe(false);
    await s.outbox.drain();
    expect(r.received).toHaveLength(0);
    expect((await s.store.push.deliveries({ limit: 1 }))[0]).toMatchObject({ status: 'dead', last_error: 'the push config was deleted' });
  });

  it('a claim whose owner died is taken over after its lease and sent under the same id', async () => {
    const s = await setup();
    const r = await hook();
    await s.registry.create(caller, s.attempt, { taskId: s.attempt.record_id, url: r.url });
    await s.store.putRecord(closeAttempt(s.attempt));
    await s.outbox.recover();
    const now = s.clock.now();
    const [stolen] = await s.store.push.claim('crashed-worker', now.toISOString(), new Date(now.getTime() + 5_000).toISOString(), 10);
    expect(stolen).toBeDefined();
    expect(await s.outbox.drain()).toBe(0); // still leased
    s.clock.advance(5_001);
    expect(await s.outbox.drain()).toBe(1);
    expect(r.received.map((x) => x.headers['baton-delivery-id'])).toEqual([stolen!.delivery_id]);
    expect(await s.store.push.finish(stolen!.delivery_id, 'crashed-worker', { status: 'dead', at: now.toISOString() })).toBe(false);
    expect(await s.store.push.delivery(stolen!.delivery_id)).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('recovery delivers an outcome closed but never enqueued, once, and re-reads open tasks at most once per poll interval', async () => {
    const refreshed: string[] = [];
    const s = await setup({ refresh: async (id) => void refreshed.push(id), pollMs: 10_000 });
    const r = await hook();
    await s.registry.create(caller, s.attempt, { taskId: s.attempt.record_id, url: r.url });
    await s.outbox.recover();
    await s.outbox.recover();
    expect(refreshed).toEqual([s.attempt.record_id]); // open: re-read, but not again within pollMs
    s.clock.advance(10_000);
    await s.outbox.recover();
    expect(refreshed).toHaveLength(2);
    // The process "died" between closing the attempt and enqueueing its delivery.
    await s.store.putRecord(closeAttempt(s.attempt, 'unknown'));
    await s.outbox.recover();
    await s.outbox.recover();
    await s.outbox.drain();
    expect(r.received).toHaveLength(1);
    const task = JSON.parse(r.received[0]!.body).task;
    expect(task.status.state).toBe('TASK_STATE_WORKING'); // unverified is never reported done
    expect(task.metadata['urn:baton:outcome:v1']).toMatchObject({ outcome: 'unknown', verified: false });
    expect(refreshed).toHaveLength(2);
  });

  it('registering on a task that already has its outcome delivers it; configs per task are bounded', async () => {
    const s = await setup();
    const r = await hook();
    const closed = closeAttempt(s.attempt, 'cancelled');
    await s.store.putRecord(closed);
    await s.registry.create(caller, closed, { taskId: closed.record_id, url: r.url, id: 'a' });
    await s.registry.create(caller, closed, { taskId: closed.record_id, url: r.url, id: 'a' }); // upsert, not a second config
    await s.registry.create(caller, closed, { taskId: closed.record_id, url: r.url, id: 'b' });
    await s.registry.create(caller, closed, { taskId: closed.record_id, url: r.url, id: 'c' });
    await expect(s.registry.create(caller, closed, { taskId: closed.record_id, url: r.url, id: 'd' })).rejects.toMatchObject({ code: 'limit_exceeded' });
    expect((await s.registry.list(closed)).map((c) => c.id)).toEqual(['a', 'b', 'c']);
    await s.outbox.drain();
    expect(r.received).toHaveLength(3);
    expect(new Set(r.received.map((x) => x.headers['baton-delivery-id'])).size).toBe(3);
  });
});
