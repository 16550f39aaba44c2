/**
 * Self-tests of the push fixtures, without Baton:
 * - the integrator receiver (e2e/integrator/main.ts), fed deliveries signed here with keys
 *   served from a local JWKS server, must tell valid from invalid ones;
 * - the delegatee agents' push modes (e2e/agents, --push-mode) must POST what they promise
 *   to a receiver in this process.
 * Everything listens on 127.0.0.1; every wait is a bounded poll.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalJWKSet, exportJWK, FlattenedSign, generateKeyPair, importJWK, jwtVerify, type CryptoKey, type JWK } from 'jose';
import { cardSigningBytes } from '../src/cards/canonical-card.ts';
import { verifyDetached } from '../src/records/signature.ts';
import { forgeToken, TOKEN_HEADER, type PushMode } from './agents/push.ts';
import { pollUntil, spawnAgent, spawnIntegrator, stopAll, type SpawnedAgent, type SpawnedIntegrator } from './harness/process.ts';

const OUTCOME = 'urn:baton:outcome:v2';
const TOKEN = 'integrator-token-123';

const listen = (server: Server): Promise<string> =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
const close = (server: Server | undefined): Promise<void> =>
  new Promise((resolve) => {
    if (!server) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });

// ---------------------------------------------------------------------------------------
// Keys and the stand-in for Baton's JWKS endpoint.

interface Signer {
  kid: string;
  alg: 'ES256' | 'EdDSA';
  key: CryptoKey;
}
let es: Signer;
let ed: Signer;
let rogue: Signer; // never published
let jwksServer: Server;
let jwksUrl = '';

async function makeSigner(alg: 'ES256' | 'EdDSA', kid: string): Promise<{ signer: Signer; jwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { signer: { kid, alg, key: privateKey }, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

interface DeliveryOpts {
  signer?: Signer;
  deliveryId?: string;
  /** `baton_delivery` claim; defaults to the delivery id. */
  claimId?: string;
  /** `baton_aud` claim; also where it is posted unless `postTo` is given. */
  aud: string;
  postTo?: string;
  iat?: number;
  token?: string | undefined;
  idempotencyKey?: string;
  /** Bytes actually sent; defaults to the signed bytes. */
  sendBody?: string;
  signal?: AbortSignal;
}

/** A Baton-shaped delivery body: a StreamResponse `task` carrying the projected outcome. */
const taskBody = (taskId: string, outcome = 'succeeded'): string =>
  JSON.stringify({
    task: {
      id: taskId,
      contextId: 'ctx-1',
      status: { state: 'TASK_STATE_COMPLETED' },
      metadata: { [OUTCOME]: { attemptId: taskId, outcome, receipt: 'rcpt-1', verified: outcome === 'succeeded' } },
    },
  });

async function deliver(body: string, o: DeliveryOpts): Promise<Response> {
  const signer = o.signer ?? es;
  const id = o.deliveryId ?? `dlv_${randomUUID()}`;
  const jws = await new FlattenedSign(new TextEncoder().encode(body))
    .setProtectedHeader({ alg: signer.alg, kid: signer.kid, typ: 'JOSE', baton_delivery: o.claimId ?? id, baton_aud: o.aud, iat: o.iat ?? Math.floor(Date.now() / 1000) })
    .sign(signer.key);
  const headers: Record<string, string> = {
    'content-type': 'application/a2a+json',
    'Baton-Signature': `${jws.protected}..${jws.signature}`,
    'Baton-Delivery-Id': id,
    'Idempotency-Key': o.idempotencyKey ?? id,
  };
  if (o.token !== undefined) headers[TOKEN_HEADER] = o.token;
  return fetch(o.postTo ?? o.aud, { method: 'POST', headers, body: o.sendBody ?? body, ...(o.signal ? { signal: o.signal } : {}) });
}

// ---------------------------------------------------------------------------------------
// An in-process webhook for the agents' pushes.

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  json: Record<string, unknown>;
}
let sink: Server;
let sinkUrl = '';
const received: Received[] = [];

const agents = {} as Record<PushMode, SpawnedAgent>;
let plain: SpawnedIntegrator;
let flaky: SpawnedIntegrator;
let holder: SpawnedIntegrator;

beforeAll(async () => {
  const a = await makeSigner('ES256', 'baton-es256');
  const b = await makeSigner('EdDSA', 'baton-ed25519');
  const r = await makeSigner('ES256', 'rogue-es256');
  [es, ed, rogue] = [a.signer, b.signer, r.signer];
  jwksServer = createServer((req, res) => {
    if (req.url !== '/.well-known/jwks.json') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [a.jwk, b.jwk] }));
  });
  jwksUrl = `${await listen(jwksServer)}/.well-known/jwks.json`;

  sink = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      received.push({ path: req.url ?? '', headers: req.headers, raw, json: JSON.parse(raw.toString('utf8')) as Record<string, unknown> });
      res.writeHead(200).end();
    });
  });
  sinkUrl = await listen(sink);

  // Spawn in parallel: each tsx start costs about a second.
  const started = await Promise.allSettled([
    spawnIntegrator({ jwksUrl, token: TOKEN }).then((i) => (plain = i)),
    spawnIntegrator({ jwksUrl, failFirst: 2 }).then((i) => (flaky = i)),
    spawnIntegrator({ jwksUrl, holdFirstMs: 20_000 }).then((i) => (holder = i)),
    ...(['token', 'jwt', 'forge', 'replay', 'drop'] as const).map((mode) =>
      spawnAgent({ behaviour: 'honest', name: `push-${mode}`, stepMs: 10, pushMode: mode }).then((ag) => (agents[mode] = ag)),
    ),
  ]);
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
});
afterAll(async () => {
  await stopAll();
  await Promise.all([close(jwksServer), close(sink)]);
});

// ---------------------------------------------------------------------------------------

describe('integrator receiver', () => {
  it('accepts an ES256 and an EdDSA delivery and extracts task id and outcome', async () => {
    const t1 = `task-${randomUUID()}`;
    const r1 = await deliver(taskBody(t1), { aud: plain.hookUrl, token: TOKEN, deliveryId: 'dlv-es' });
    expect(r1.status).toBe(200);
    const sub = `${plain.url}/hook/tenant-a/x?y=1`;
    const r2 = await deliver(taskBody('task-ed', 'failed'), { signer: ed, aud: sub, token: TOKEN, deliveryId: 'dlv-ed' });
    expect(r2.status).toBe(200);
    const { deliveries } = await plain.deliveries();
    const es1 = deliveries.find((d) => d.id === 'dlv-es');
    expect(es1).toMatchObject({ valid: true, status: 200, answered: true, taskId: t1, outcome: 'succeeded', verified: true, attemptId: t1, kind: 'task', state: 'TASK_STATE_COMPLETED', kid: 'baton-es256', alg: 'ES256', path: '/hook' });
    expect(es1?.body).toEqual(JSON.parse(taskBody(t1)));
    expect(deliveries.find((d) => d.id === 'dlv-ed')).toMatchObject({ valid: true, status: 200, outcome: 'failed', verified: false, alg: 'EdDSA', path: '/hook/tenant-a/x?y=1' });
  });

  it('refuses tampered bodies, wrong audiences, wrong tokens and mismatched ids, recording each', async () => {
    const body = taskBody('task-bad');
    const cases: Array<[string, DeliveryOpts, number, RegExp]> = [
      ['tampered', { aud: plain.hookUrl, token: TOKEN, sendBody: body.replace('succeeded', 'failed') }, 401, /^signature: ERR_JWS_SIGNATURE_VERIFICATION_FAILED/],
      // Signed for another receiver's URL, posted to this one.
      ['wrong-aud', { aud: flaky.hookUrl, postTo: plain.hookUrl, token: TOKEN }, 401, /baton_aud/],
      ['wrong-token', { aud: plain.hookUrl, token: `${TOKEN}x` }, 401, /X-A2A-Notification-Token/],
      ['no-token', { aud: plain.hookUrl, token: undefined }, 401, /X-A2A-Notification-Token/],
      ['unknown-key', { aud: plain.hookUrl, token: TOKEN, signer: rogue }, 401, /^signature: ERR_JWKS_NO_MATCHING_KEY/],
      ['claim-id', { aud: plain.hookUrl, token: TOKEN, claimId: 'someone-else' }, 401, /baton_delivery/],
      ['idem-key', { aud: plain.hookUrl, token: TOKEN, idempotencyKey: 'other' }, 400, /Idempotency-Key/],
      ['stale-iat', { aud: plain.hookUrl, token: TOKEN, iat: Math.floor(Date.now() / 1000) - 3_600 }, 401, /iat/],
    ];
    for (const [name, opts, status, reason] of cases) {
      const id = `dlv-${name}`;
      const res = await deliver(body, { ...opts, deliveryId: id });
      expect(res.status, name).toBe(status);
      const rec = (await plain.deliveries()).deliveries.find((d) => d.id === id);
      expect(rec, name).toMatchObject({ valid: false, status });
      expect(rec?.reason, name).toMatch(reason);
    }
    const { counts } = await plain.deliveries();
    expect(counts.invalid).toBeGreaterThanOrEqual(cases.length);
  });

  it('answers 503 to the first N valid deliveries, then 200 (invalid ones do not count)', async () => {
    const body = taskBody('task-retry');
    expect((await deliver(body, { aud: flaky.hookUrl, sendBody: `${body} ` })).status).toBe(401);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await deliver(body, { aud: flaky.hookUrl, deliveryId: 'dlv-retry' })).status);
    expect(statuses).toEqual([503, 503, 200]);
    const { deliveries, counts } = await flaky.deliveries();
    expect(deliveries.filter((d) => d.id === 'dlv-retry').map((d) => d.status)).toEqual([503, 503, 200]);
    expect(counts).toMatchObject({ total: 4, valid: 3, invalid: 1, uniqueIds: 1, accepted: 1, uniqueAccepted: 1 });
  });

  it('holds the first valid delivery open, records it on arrival, and notes when the sender goes away', async () => {
    const abort = new AbortController();
    const pending = deliver(taskBody('task-held'), { aud: holder.hookUrl, deliveryId: 'dlv-held', signal: abort.signal });
    const seen = await holder.waitForDeliveries((d) => d.deliveries.some((x) => x.id === 'dlv-held'));
    expect(seen.deliveries.find((x) => x.id === 'dlv-held')).toMatchObject({ valid: true, held: true, answered: false, aborted: false, status: 200 });
    abort.abort(); // the "gateway" dies mid-delivery
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    const after = await holder.waitForDeliveries((d) => d.deliveries.some((x) => x.id === 'dlv-held' && x.aborted));
    expect(after.deliveries.find((x) => x.id === 'dlv-held')).toMatchObject({ answered: false, aborted: true });
    // Only the first is held: the redelivery is answered at once.
    expect((await deliver(taskBody('task-held'), { aud: holder.hookUrl, deliveryId: 'dlv-held' })).status).toBe(200);
    const { counts } = await holder.deliveries();
    expect(counts).toMatchObject({ total: 2, valid: 2, uniqueIds: 1 });
  });

  it('DELETE /_deliveries forgets what was received', async () => {
    await holder.clearDeliveries();
    expect((await holder.deliveries()).counts.total).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------

interface RpcResult {
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

async function rpc(agent: SpawnedAgent, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await fetch(`${agent.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params }),
  });
  const json = (await res.json()) as RpcResult;
  if (!json.result) throw new Error(`${method}: ${JSON.stringify(json.error)}`);
  return json.result;
}

/** SendMessage with a push config; returns the agent's task id. */
async function sendWithPush(agent: SpawnedAgent, text: string, url: string, token: string, returnImmediately = false): Promise<string> {
  const result = await rpc(agent, 'SendMessage', {
    message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] },
    configuration: { returnImmediately, taskPushNotificationConfig: { url, token } },
  });
  const task = result.task as { id: string } | undefined;
  if (!task) throw new Error(`SendMessage returned no task: ${JSON.stringify(result)}`);
  return task.id;
}

const at = (path: string): Received[] => received.filter((r) => r.path === path);
const waitAt = (path: string, n: number): Promise<Received[]> =>
  pollUntil(async () => at(path), (rs) => rs.length >= n, { what: `${n} pushes at ${path}` });
const kindOf = (r: Received): string => {
  const [kind, value] = Object.entries(r.json)[0] ?? ['none', {}];
  const state = ((value as { status?: { state?: string } }).status?.state ?? '').replace('TASK_STATE_', '');
  return state ? `${kind}:${state}` : kind;
};
const ALL_EVENTS = ['task:SUBMITTED', 'statusUpdate:WORKING', 'artifactUpdate', 'statusUpdate:COMPLETED'];

describe('agent push modes', () => {
  it('cards advertise pushNotifications and still verify under the agent JWKS', async () => {
    const agent = agents.jwt;
    const card = (await (await fetch(`${agent.url}/.well-known/agent-card.json`)).json()) as {
      capabilities: { pushNotifications?: boolean };
      signatures: Array<{ protected: string; signature: string }>;
    };
    expect(card.capabilities.pushNotifications).toBe(true);
    const { signatures, ...unsigned } = card;
    const jwk = agent.jwks.keys[0] as JWK;
    const header = await verifyDetached(cardSigningBytes(unsigned), signatures[0]!, (await importJWK(jwk, 'ES256')) as CryptoKey);
    expect(header.kid).toBe(jwk.kid);
  });

  it('jwt: every push carries the token and a Bearer JWT that verifies against the agent JWKS', async () => {
    const agent = agents.jwt;
    const path = `/push/jwt/${randomUUID()}`;
    const url = `${sinkUrl}${path}`;
    const taskId = await sendWithPush(agent, 'push me', url, 'tok-jwt');
    const pushes = await waitAt(path, 4);
    expect(pushes.map(kindOf)).toEqual(ALL_EVENTS);
    const jwks = createLocalJWKSet(agent.jwks as { keys: JWK[] });
    const jtis = new Set<string>();
    for (const p of pushes) {
      expect(p.headers['content-type']).toBe('application/a2a+json');
      expect(p.headers[TOKEN_HEADER.toLowerCase()]).toBe('tok-jwt');
      const auth = p.headers.authorization ?? '';
      expect(auth).toMatch(/^Bearer /);
      const { payload, protectedHeader } = await jwtVerify(auth.slice('Bearer '.length), jwks, { issuer: agent.url, audience: url, algorithms: ['ES256'] });
      expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: agent.jwks.keys[0]?.kid, typ: 'JWT' });
      expect(payload.task_id).toBe(taskId);
      expect(payload.body_sha256).toBe(createHash('sha256').update(p.raw).digest('base64url'));
      expect(payload.exp).toBe((payload.iat ?? 0) + 60);
      expect(typeof payload.jti).toBe('string');
      jtis.add(payload.jti ?? '');
    }
    expect(jtis.size).toBe(pushes.length);
    const log = await pollUntil(() => agent.log(), (l) => l.pushes.filter((x) => x.url === url).length >= 4, { what: 'agent push log' });
    expect(log.pushes.filter((x) => x.url === url).map((x) => [x.mode, x.status, x.jwt, x.taskId])).toEqual(Array(4).fill(['jwt', 200, true, taskId]));
  });

  it('token: a config created after the send (CreateTaskPushNotificationConfig) gets the later events with the token header', async () => {
    const agent = agents.token;
    const path = `/push/token/${randomUUID()}`;
    const url = `${sinkUrl}${path}`;
    const started = await rpc(agent, 'SendMessage', {
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'be slow please' }] },
      configuration: { returnImmediately: true },
    });
    const taskId = (started.task as { id: string }).id;
    const created = await rpc(agent, 'CreateTaskPushNotificationConfig', { taskId, url, token: 'tok-plain' });
    expect(created).toMatchObject({ taskId, url, token: 'tok-plain' });
    expect(typeof created.id).toBe('string');
    await rpc(agent, 'CancelTask', { id: taskId });
    // The WORKING event may land after the config was created (timing), CANCELED always does.
    const pushes = await pollUntil(async () => at(path), (rs) => rs.some((r) => kindOf(r) === 'statusUpdate:CANCELED'), { what: `a CANCELED push at ${path}` });
    expect(pushes.map(kindOf).every((k) => k === 'statusUpdate:WORKING' || k === 'statusUpdate:CANCELED')).toBe(true);
    for (const push of pushes) {
      expect(push.headers[TOKEN_HEADER.toLowerCase()]).toBe('tok-plain');
      expect(push.headers.authorization).toBeUndefined();
    }
  });

  it('forge: pushes carry a wrong token and no JWT', async () => {
    const path = `/push/forge/${randomUUID()}`;
    await sendWithPush(agents.forge, 'forged', `${sinkUrl}${path}`, 'tok-forge');
    const pushes = await waitAt(path, 4);
    expect(pushes.map(kindOf)).toEqual(ALL_EVENTS);
    for (const p of pushes) {
      expect(p.headers[TOKEN_HEADER.toLowerCase()]).toBe(forgeToken('tok-forge'));
      expect(p.headers[TOKEN_HEADER.toLowerCase()]).not.toBe('tok-forge');
      expect(p.headers.authorization).toBeUndefined();
    }
  });

  it('replay: each push twice, then the first one again after the terminal one', async () => {
    const path = `/push/replay/${randomUUID()}`;
    await sendWithPush(agents.replay, 'again', `${sinkUrl}${path}`, 'tok-replay');
    const pushes = await waitAt(path, 9);
    expect(pushes.map(kindOf)).toEqual([...ALL_EVENTS.flatMap((k) => [k, k]), 'task:SUBMITTED']);
    expect(pushes[8]!.raw.equals(pushes[0]!.raw)).toBe(true);
    expect(pushes.every((p) => p.headers[TOKEN_HEADER.toLowerCase()] === 'tok-replay')).toBe(true);
    const log = await agents.replay.log();
    expect(log.pushes.filter((x) => x.url.endsWith(path)).map((x) => x.send)).toEqual([...Array(4).fill(['event', 'duplicate']).flat(), 'replay-first']);
  });

  it('drop: accepts the config and sends nothing', async () => {
    const path = `/push/drop/${randomUUID()}`;
    const before = (await agents.drop.log()).droppedPushes;
    await sendWithPush(agents.drop, 'silence', `${sinkUrl}${path}`, 'tok-drop');
    const log = await pollUntil(() => agents.drop.log(), (l) => l.droppedPushes >= before + 4, { what: 'dropped pushes' });
    expect(log.pushes).toEqual([]);
    expect(at(path)).toEqual([]);
  });
});
