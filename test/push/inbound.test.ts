import { createHash, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { parseJwks } from '../../src/cards/jwks.ts';
import { BatonError } from '../../src/errors.ts';
import { TrustStore } from '../../src/cards/trust-store.ts';
import { DelegateeConfig } from '../../src/gateway/delegatees.ts';
import { InboundWebhooks } from '../../src/push/inbound.ts';
import { SecretBox } from '../../src/push/secret-box.ts';
import { systemClock } from '../../src/records/time.ts';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/log.ts';
import { closeAttempt, openAttempt, until, world } from './support.ts';

const CARD_ORIGIN = 'http://127.0.0.1:4999';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(inboundAuth: 'token' | 'token+jwt' = 'token', opts: { broken?: boolean; throws?: BatonError } = {}) {
  const w = await world();
  const box = new SecretBox(Buffer.alloc(32, 5));
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'agent-key-1', alg: 'ES256', use: 'sig' };
  const trust = new TrustStore();
  trust.pin(CARD_ORIGIN, await parseJwks(JSON.stringify({ keys: [jwk] })));
  const refreshed: string[] = [];
  const logged: Array<{ level: number; msg: string }> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logged.push(JSON.parse(line) as { level: number; msg: string });
      done();
    },
  });
  let release: () => void = () => {};
  let gate: Promise<void> | undefined;
  const app = express();
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const publicUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const inbound = new InboundWebhooks({
    store: w.store,
    box,
    trust,
    publicUrl,
    clock: systemClock,
    logger: createLogger({ level: 'info', destination }),
    delegatee: (id) => {
      if (opts.broken) throw new TypeError('a bug in the delegatee registry');
      if (opts.throws) throw opts.throws;
      return id === 'alice' ? DelegateeConfig.parse({ id: 'alice', cardUrl: `${CARD_ORIGIN}/.well-known/agent-card.json`, inboundAuth }) : undefined;
    },
    refresh: async (id) => {
      refreshed.push(id);
      await gate;
    },
  });
  app.use(inbound.router());
  cleanups.push(async () => {
    await new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
    await w.store.close();
  });
  const attempt = openAttempt();
  await w.store.putRecord(attempt);
  const reg = inbound.registrationFor(attempt.record_id);
  const post = (body: string, headers: Record<string, string> = {}, taskId = attempt.record_id) =>
    fetch(inbound.urlFor(taskId), { method: 'POST', headers: { 'content-type': 'application/a2a+json', ...headers }, body });
  const completed = JSON.stringify({ task: { id: 'remote-task-1', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } } });
  const jwt = (claims: Record<string, unknown> = {}, body = completed, key = privateKey) =>
    new SignJWT({ task_id: 'remote-task-1', body_sha256: createHash('sha256').update(body).digest('base64url'), ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'agent-key-1' })
      .setIssuedAt()
      .setExpirationTime('1m')
      .setAudience(typeof claims.aud === 'string' ? claims.aud : reg.url)
      .setJti(randomUUID())
      .sign(key);
  return {
    ...w, box, inbound, attempt, reg, post, completed, jwt, refreshed, logged,
    hold: () => (gate = new Promise<void>((r) => (release = r))),
    release: () => release(),
  };
}

describe("Baton's inbound webhook", () => {
  it('registers a per-task token and URL with the delegatee', async () => {
    const s = await setup();
    expect(s.reg).toMatchObject({ id: 'baton', url: expect.stringMatching(/\/push\/inbound\/att_/), token: s.box.inboundToken(s.attempt.record_id) });
  });

  it('an authenticated "completed" only triggers a re-read; it is never taken as the outcome', async () => {
    const s = await setup();
    const res = await s.post(s.completed, { 'x-a2a-notification-token': s.reg.token });
    expect(res.status).toBe(202);
    await until(() => s.refreshed.length === 1);
    expect(s.refreshed).toEqual([s.attempt.record_id]);
    // Nothing about the task changed on the notification's word.
    expect((await s.store.getRecord(s.attempt.record_id))?.revision_id).toBe(s.attempt.revision_id);
  });

  it('refuses a missing or wrong token, an unknown task and a token minted for another task, all alike', async () => {
    const s = await setup();
    const other = openAttempt();
    await s.store.putRecord(other);
    const cases = [
      await s.post(s.completed),
      // Another last character (a fixed 'A' equals the real one for 1 token in 64: that was a flake).
      await s.post(s.completed, { 'x-a2a-notification-token': `${s.reg.token.slice(0, -1)}${s.reg.token.endsWith('A') ? 'B' : 'A'}` }),
      await s.post(s.completed, { 'x-a2a-notification-token': s.reg.token }, 'att_does_not_exist'),
      await s.post(s.completed, { 'x-a2a-notification-token': s.reg.token }, other.record_id),
    ];
    expect(cases.map((r) => r.status)).toEqual([401, 401, 401, 401]);
    expect(s.refreshed).toEqual([]);
  });

  it('refuses malformed bodies, duplicate keys and a notification about another remote task', async () => {
    const s = await setup();
    const auth = { 'x-a2a-notification-token': s.reg.token };
    expect((await s.post('{"task": ', auth)).status).toBe(400);
    expect((await s.post('{"task": {"id": "remote-task-1", "id": "x"}}', auth)).status).toBe(400);
    expect((await s.post(JSON.stringify({ statusUpdate: { taskId: 'someone-elses', status: { state: 'TASK_STATE_COMPLETED' } } }), auth)).status).toBe(400);
    expect((await s.post(`{"task": {"id": "remote-task-1", "pad": "${'x'.repeat(300 * 1024)}"}}`, auth)).status).toBe(413);
    expect(s.refreshed).toEqual([]);
  });

  it('replays after the outcome are ignored; a burst while a re-read runs coalesces into one more', async () => {
    const s = await setup();
    const auth = { 'x-a2a-notification-token': s.reg.token };
    s.hold();
    expect((await s.post(s.completed, auth)).status).toBe(202);
    await until(() => s.refreshed.length === 1);
    for (let i = 0; i < 5; i++) expect((await s.post(s.completed, auth)).status).toBe(202);
    s.release();
    await s.inbound.idle();
    expect(s.refreshed).toHaveLength(2);
    await s.store.putRecord(closeAttempt(s.attempt));
    const late = await s.post(JSON.stringify({ statusUpdate: { taskId: 'remote-task-1', status: { state: 'TASK_STATE_WORKING' } } }), auth);
    expect(late.status).toBe(200);
    expect(await late.json()).toMatchObject({ status: 'ignored' });
    expect(s.refreshed).toHaveLength(2);
  });

  it('with token+jwt, requires a JWT from a key pinned for the card origin, bound to this webhook, this body and this task, used once', async () => {
    const s = await setup('token+jwt');
    const token = { 'x-a2a-notification-token': s.reg.token };
    const bearer = async (claims?: Record<string, unknown>, body?: string, key?: CryptoKey) => ({ ...token, authorization: `Bearer ${await s.jwt(claims, body, key)}` });
    expect((await s.post(s.completed, token)).status).toBe(401); // token alone is not enough here
    const stranger = (await generateKeyPair('ES256')).privateKey;
    expect((await s.post(s.completed, await bearer({}, s.completed, stranger))).status).toBe(401);
    expect((await s.post(s.completed, await bearer({ aud: 'http://127.0.0.1:1/elsewhere' }))).status).toBe(401);
    expect((await s.post(s.completed, await bearer({ task_id: 'another-task' }))).status).toBe(401);
    expect((await s.post(s.completed, await bearer({ body_sha256: 'AAAA' }))).status).toBe(401);
    expect((await s.post(s.completed, await bearer({ body_sha256: undefined }))).status).toBe(401); // required, not optional
    const good = await bearer();
    expect((await s.post(s.completed, good)).status).toBe(202);
    expect((await s.post(s.completed, good)).status).toBe(401); // the same JWT again is a replay
    await until(() => s.refreshed.length === 1);
    // A JWT is checked whenever one is sent, even where only the token is required.
    const t = await setup('token');
    const forged = (await generateKeyPair('ES256')).privateKey;
    expect((await t.post(t.completed, { 'x-a2a-notification-token': t.reg.token, authorization: `Bearer ${await t.jwt({}, t.completed, forged)}` })).status).toBe(401);
  });

  it('refuses a JWT without body_sha256, however valid otherwise, and says why', async () => {
    const s = await setup('token+jwt');
    const res = await s.post(s.completed, { 'x-a2a-notification-token': s.reg.token, authorization: `Bearer ${await s.jwt({ body_sha256: undefined })}` });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { code: 'authentication_required', message: expect.stringContaining('body_sha256 missing') } });
    expect(s.refreshed).toEqual([]);
  });

  it('answers 500, logged as an error, when something other than the notification is at fault', async () => {
    const s = await setup('token', { broken: true });
    const res = await s.post(s.completed, { 'x-a2a-notification-token': s.reg.token });
    expect(res.status).toBe(500);
    const body = await res.json();
    expect(JSON.stringify(body)).not.toContain('a bug in the delegatee registry');
    // ADR-0014's vocabulary (issue #25 item 12: it was `internal`, a code outside it).
    expect(body).toMatchObject({ error: { code: 'storage_error' } });
    expect(s.logged.some((l) => l.level === 50 && l.msg === 'push inbound: unexpected failure')).toBe(true);
  });

  it('renders every refusal through the one HTTP renderer: the ADR-0014 table decides the status (issue #25 item 12)', async () => {
    for (const [code, status] of [['context_invalidated', 409], ['deny', 403], ['limit_exceeded', 429], ['unavailable', 503]] as const) {
      const s = await setup('token', { throws: new BatonError(code, 'refused for the test') });
      const res = await s.post(s.completed, { 'x-a2a-notification-token': s.reg.token });
      expect([code, res.status]).toEqual([code, status]);
      expect(await res.json()).toMatchObject({ error: { code } });
    }
  });
});
