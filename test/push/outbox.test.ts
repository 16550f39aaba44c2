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
import { refOf, sealRecord } from '../../src/records/envelope.ts';
import { systemClock } from '../../src/records/time.ts';
import { actor, closeAttempt, openAttempt, quietLogger, receiver, world } from './support.ts';

const LOOPBACK: WebhookPolicy = { allowHttp: true, allow: ['127.0.0.0/8'] };
const caller = { id: 'planner' } as Caller;
/** The gateway this outbox sends for (its actor id). */
const GATEWAY = 'actor_baton_test';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(opts: { policy?: WebhookPolicy; retry?: Partial<OutboxOptions['retry']> } = {}) {
  const w = await world();
  const box = new SecretBox(Buffer.alloc(32, 3));
  // A minute ahead of the records the tests seal with the system clock, so recovery's
  // grace period for the live path has passed for them unless a test says otherwise.
  let t = Date.now() + 60_000;
  const clock = { now: () => new Date(t), advance: (ms: number) => (t += ms) };
  const agent = guardedAgent(opts.policy ?? LOOPBACK, { connectTimeoutMs: 2_000 });
  const outboxOpts: OutboxOptions = {
    retry: { maxAttempts: 5, baseMs: 1_000, maxMs: 60_000, ...opts.retry },
    deliveryTimeoutMs: 2_000,
    leaseMs: 5_000,
    intervalMs: 50,
    batch: 8,
  };
  const outbox = new Outbox(
    { store: w.store, keyring: w.keyring, box, agent, policy: opts.policy ?? LOOPBACK, logger: quietLogger(), owner: randomIds.next('wrk'), gateway: GATEWAY, clock, random: () => 0.5 },
    outboxOpts,
  );
  const registry = new PushRegistry({ store: w.store, box, policy: LOOPBACK, ids: randomIds, outbox, maxPerTask: 3, clock });
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
    await expect(flattenedVerify({ protected: protectedHeader!, payload: base64url.encode(got.body.replace('done', 'dona')), signature: signature! }, jwks)).rejects.toMatchObject({ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });

    const body = JSON.parse(got.body);
    expect(body.task).toMatchObject({ id: s.attempt.record_id, contextId: 'ctx_1', status: { state: 'TASK_STATE_COMPLETED' }, artifacts: verified.artifacts });
    // The closing revision, so a later reconciled outcome (under another delivery id) can be ordered against this one.
    expect(body.task.metadata['urn:baton:outcome:v2']).toMatchObject({ attemptId: s.attempt.record_id, outcome: 'succeeded', verified: true, revisionId: closed.revision_id, closedAt: closed.issued_at });
    expect(got.body).not.toContain('remote-task-1');

    const [row] = await s.store.push.deliveries({ task_id: s.attempt.record_id, limit: 10 });
    expect(row).toMatchObject({ status: 'delivered', attempts: 1 });
    for (const f of ['baton.db', 'baton.db-wal']) {
      const file = join(s.dir, f);
      if (existsSync(file)) expect(readFileSync(file).toString('latin1')).not.toMatch(/sekrit/);
    }
  });

  it('retries with exponential backoff: the same id and body bytes every time, signed afresh at each try', async () => {
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
    // A long outage and a key rotation later, the last try is signed with the new key and a current iat.
    s.clock.advance(3_600_000);
    const rotated = await s.keyring.rotate('ES256');
    expect(await s.outbox.drain()).toBe(1);
    expect(r.received).toHaveLength(3);
    expect(new Set(r.received.map((x) => `${x.headers['baton-delivery-id']}|${x.body}`)).size).toBe(1);
    const jwks = createLocalJWKSet(JSON.parse(JSON.stringify(s.keyring.jwks())));
    const headers = [];
    for (const x of r.received) {
      const [protectedHeader, , signature] = String(x.headers['baton-signature']).split('.');
      await flattenedVerify({ protected: protectedHeader!, payload: base64url.encode(x.body), signature: signature! }, jwks, { algorithms: ['ES256'] });
      headers.push(decodeProtectedHeader({ protected: protectedHeader! }));
    }
    expect(headers.every((h) => h.baton_delivery === r.received[0]!.headers['baton-delivery-id'] && h.baton_aud === r.url)).toBe(true);
    expect(headers[2]).toMatchObject({ kid: rotated.kid, iat: Math.floor(s.clock.now().getTime() / 1000) });
    expect(headers[0]!.kid).not.toBe(rotated.kid);
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
    const [stolen] = await s.store.push.claim('crashed-worker', now.toISOString(), new Date(now.getTime() + 5_000).toISOString(), 10, GATEWAY);
    expect(stolen).toBeDefined();
    expect(await s.outbox.drain()).toBe(0); // still leased
    s.clock.advance(5_001);
    expect(await s.outbox.drain()).toBe(1);
    expect(r.received.map((x) => x.headers['baton-delivery-id'])).toEqual([stolen!.delivery_id]);
    expect(await s.store.push.finish(stolen!.delivery_id, 'crashed-worker', { status: 'dead', at: now.toISOString() })).toBe(false);
    expect(await s.store.push.delivery(stolen!.delivery_id)).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('recovery delivers an outcome closed but never enqueued, once; an open task is only marked seen (the follower brings its verdict)', async () => {
    const s = await setup();
    const r = await hook();
    await s.registry.create(caller, s.attempt, { taskId: s.attempt.record_id, url: r.url });
    await s.outbox.recover();
    expect(await s.store.push.changedConfigs(10, GATEWAY)).toEqual([]); // examined, so seen, although open
    await s.outbox.drain();
    expect(r.received).toEqual([]); // nothing to deliver for an open task
    // The process "died" between closing the attempt and enqueueing its delivery.
    const closed = closeAttempt(s.attempt, 'unknown');
    await s.store.putRecord(closed);
    await s.outbox.recover();
    await s.outbox.recover();
    await s.outbox.drain();
    expect(r.received).toHaveLength(1);
    const task = JSON.parse(r.received[0]!.body).task;
    expect(task.status.state).toBe('TASK_STATE_WORKING'); // unverified is never reported done
    expect(task.metadata['urn:baton:outcome:v2']).toMatchObject({ outcome: 'unknown', verified: false, revisionId: closed.revision_id });
  });

  it("another organisation's gateway on the same store neither recovers nor sends this gateway's notifications", async () => {
    const s = await setup();
    const r = await hook();
    await s.registry.create(caller, s.attempt, { taskId: s.attempt.record_id, url: r.url });
    expect(await s.store.push.configs(s.attempt.record_id)).toMatchObject([{ gateway_id: GATEWAY }]);
    const closed = closeAttempt(s.attempt);
    await s.store.putRecord(closed);
    const other = new Outbox(
      { store: s.store, keyring: s.keyring, box: s.box, agent: s.agent, policy: LOOPBACK, logger: quietLogger(), owner: 'wrk_other', gateway: 'actor_baton_other', clock: s.clock },
      s.outboxOpts,
    );
    await other.recover();
    expect(await other.notify(closed)).toBe(0); // e.g. a legacy work row the other gateway judged: this gateway's recovery sends it
    expect(await s.store.push.deliveries({ task_id: s.attempt.record_id, limit: 10 })).toEqual([]);
    expect(await s.store.push.changedConfigs(10, GATEWAY)).toHaveLength(1); // not marked seen by the other gateway either
    await s.outbox.recover();
    expect(await s.store.push.deliveries({ task_id: s.attempt.record_id, limit: 10 })).toMatchObject([{ status: 'pending', gateway_id: GATEWAY }]);
    expect(await other.drain()).toBe(0);
    expect(r.received).toEqual([]);
    expect(await s.outbox.drain()).toBe(1);
    expect(r.received).toHaveLength(1);
  });

  it('recovery does not starve: configs on open tasks, however many, never keep a closed task from its outcome', async () => {
    const s = await setup();
    const r = await hook();
    const open = [];
    for (let i = 0; i < 7; i++) {
      const a = openAttempt();
      await s.store.putRecord(a);
      await s.registry.create(caller, a, { taskId: a.record_id, url: r.url });
      open.push(a);
      s.clock.advance(1);
    }
    s.clock.advance(1);
    // Registered last, closed without an enqueue (a crash): behind seven older configs on open tasks.
    await s.registry.create(caller, s.attempt, { taskId: s.attempt.record_id, url: r.url });
    await s.store.putRecord(closeAttempt(s.attempt));
    for (let pass = 0; pass < 3; pass++) await s.outbox.recover(3);
    await s.outbox.drain();
    expect(r.received).toHaveLength(1);
    expect(JSON.parse(r.received[0]!.body).task.id).toBe(s.attempt.record_id);
    expect(open).toHaveLength(7);
    expect(await s.store.push.changedConfigs(100, GATEWAY)).toEqual([]);
  });

  it('recovery leaves an outcome closed under 30 s ago to the live path, and takes it after that', async () => {
    const s = await setup();
    const r = await hook();
    await s.registry.create(caller, s.attempt, { taskId: s.attempt.record_id, url: r.url });
    await s.store.putRecord(closeAttempt(s.attempt, 'succeeded', s.clock.now()));
    s.clock.advance(29_000);
    await s.outbox.recover();
    expect(await s.store.push.deliveries({ limit: 10 })).toEqual([]);
    expect(await s.store.push.changedConfigs(10, GATEWAY)).toHaveLength(1); // left unseen for a later pass
    s.clock.advance(1_000);
    await s.outbox.recover();
    await s.outbox.drain();
    expect(r.received).toHaveLength(1);
    expect(await s.store.push.changedConfigs(10, GATEWAY)).toEqual([]);
  });

  it('a config registered again (new URL, or deleted and created again) gets its own delivery; the earlier one is superseded', async () => {
    const s = await setup();
    const first = await hook();
    const second = await hook();
    await s.registry.create(caller, s.attempt, { taskId: s.attempt.record_id, url: first.url, id: 'cfg' });
    const closed = closeAttempt(s.attempt);
    await s.store.putRecord(closed);
    await s.outbox.notify(closed);
    // Re-registered with another URL before the delivery went out: a new generation, delivered at once.
    await s.registry.create(caller, closed, { taskId: closed.record_id, url: second.url, id: 'cfg' });
    await s.outbox.drain();
    expect(first.received).toHaveLength(0);
    expect(second.received).toHaveLength(1);
    const rows = await s.store.push.deliveries({ task_id: closed.record_id, limit: 10 });
    expect(rows.map((d) => d.status).sort()).toEqual(['dead', 'delivered']);
    expect(rows.find((d) => d.status === 'dead')).toMatchObject({ last_error: 'superseded by a newer registration of this config' });
    // Deleted and created again under the same id: that registration gets the outcome too.
    await s.registry.delete(closed, 'cfg');
    s.clock.advance(1_000);
    await s.registry.create(caller, closed, { taskId: closed.record_id, url: second.url, id: 'cfg' });
    await s.outbox.drain();
    expect(second.received).toHaveLength(2);
    expect(new Set(second.received.map((x) => x.headers['baton-delivery-id'])).size).toBe(2);
    expect(second.received[0]!.body).toBe(second.received[1]!.body);
  });

  it('recovery examines configs on records that are not attempts and marks them seen', async () => {
    const s = await setup();
    const r = await hook();
    const escalation = sealRecord({ type: 'escalation', issuedBy: actor, lifecycle: 'active', body: { kind: 'breaker_tripped' } }, { ids: randomIds, clock: systemClock });
    await s.store.putRecord(escalation);
    await s.outbox.notifyOperator(escalation, r.url, { escalation: { id: escalation.record_id } });
    await s.outbox.notifyOperator(escalation, r.url, { escalation: { id: escalation.record_id } }); // same revision, same delivery
    await s.outbox.drain();
    expect(r.received).toHaveLength(1);
    const next = sealRecord({ type: 'escalation', issuedBy: actor, lifecycle: 'recorded', recordId: escalation.record_id, prior: refOf(escalation), body: { kind: 'breaker_tripped', state: 'acknowledged' } }, { ids: randomIds, clock: systemClock });
    await s.store.putRecord(next);
    await s.outbox.recover();
    expect(await s.store.push.changedConfigs(10, GATEWAY)).toEqual([]);
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
    // Oldest registration first: the upsert made 'a' a new registration (a new generation, even within one clock tick).
    expect((await s.registry.list(closed)).map((c) => c.id)).toEqual(['b', 'c', 'a']);
    await s.outbox.drain();
    expect(r.received).toHaveLength(3);
    expect(new Set(r.received.map((x) => x.headers['baton-delivery-id'])).size).toBe(3);
    const statuses = (await s.store.push.deliveries({ task_id: closed.record_id, limit: 10 })).map((d) => `${d.config_id}:${d.status}`).sort();
    expect(statuses).toEqual(['a:dead', 'a:delivered', 'b:delivered', 'c:delivered']); // the replaced registration's delivery was superseded
  });
});
