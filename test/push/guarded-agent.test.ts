/**
 * Real sockets, loopback only. Fake resolvers stand in for DNS; whenever one
 * answers with a public address (93.184.216.34) the test is built so that the
 * answer is refused, or consumed, before anything connects to it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { getDefaultAutoSelectFamily, setDefaultAutoSelectFamily, type AddressInfo } from 'node:net';
import type { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { guardedAgent, postWebhook, type ResolvedAddress, type Resolver } from '../../src/push/guarded-agent.ts';
import { addressAllowed, checkWebhookUrl, type WebhookPolicy } from '../../src/push/webhook-url.ts';
import { expectCodeAsync } from '../helpers/errors.ts';

const HOST = 'hooks.example.test';
const PUBLIC: ResolvedAddress = { address: '93.184.216.34', family: 4 };
const LOOPBACK: ResolvedAddress = { address: '127.0.0.1', family: 4 };

const NO_LOOPBACK: WebhookPolicy = { allowHttp: true, allow: [] };
const WITH_LOOPBACK: WebhookPolicy = { allowHttp: true, allow: ['127.0.0.0/8', '::1/128'] };

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
interface TestServer {
  port: number;
  hits: Array<{ method: string; url: string; body: string; headers: IncomingMessage['headers'] }>;
  close(): Promise<void>;
}

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((fn) => fn()));
});

async function serve(handler: Handler = (_req, res) => res.writeHead(204).end(), host = '127.0.0.1', port = 0): Promise<TestServer> {
  const hits: TestServer['hits'] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      hits.push({ method: req.method ?? '', url: req.url ?? '', body, headers: req.headers });
      handler(req, res);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const close = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  cleanup.push(close);
  return { port: (server.address() as AddressInfo).port, hits, close };
}

function agentFor(policy: WebhookPolicy, resolve?: Resolver, connectTimeoutMs?: number): Agent {
  const agent = guardedAgent(policy, { resolve, connectTimeoutMs });
  cleanup.push(() => agent.destroy());
  return agent;
}

/** A resolver answering `answers` in turn (the last one repeats), counting calls. */
function fakeDns(...answers: ResolvedAddress[][]): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (host: string) => {
    calls.push(host);
    return answers[Math.min(calls.length, answers.length) - 1] ?? [];
  };
  return Object.assign(resolve, { calls });
}

const post = (agent: Agent, url: URL, opts: { timeoutMs?: number; maxResponseBytes?: number } = {}) =>
  postWebhook(agent, url, '{"kind":"status-update"}', { 'content-type': 'application/json' }, { timeoutMs: 5_000, ...opts });

describe('guardedAgent: admission at connect time', () => {
  it.each([true, false])('delivers to an allow-listed address (autoSelectFamily=%s)', async (autoSelect) => {
    const before = getDefaultAutoSelectFamily();
    setDefaultAutoSelectFamily(autoSelect); // net asks lookup for {all: true} only when this is on
    try {
      const server = await serve();
      const dns = fakeDns([LOOPBACK]);
      const url = checkWebhookUrl(`http://${HOST}:${server.port}/push`, WITH_LOOPBACK);
      expect(await post(agentFor(WITH_LOOPBACK, dns), url)).toEqual({ status: 204 });
      expect(dns.calls).toEqual([HOST]);
      expect(server.hits).toHaveLength(1);
      expect(server.hits[0]).toMatchObject({ method: 'POST', url: '/push', body: '{"kind":"status-update"}' });
      expect(server.hits[0]?.headers['content-type']).toBe('application/json');
    } finally {
      setDefaultAutoSelectFamily(before);
    }
  });

  it('delivers to an allow-listed IP literal without consulting the resolver', async () => {
    const server = await serve();
    const dns = fakeDns([PUBLIC]);
    const url = checkWebhookUrl(`http://127.0.0.1:${server.port}/push`, WITH_LOOPBACK);
    expect(await post(agentFor(WITH_LOOPBACK, dns), url)).toEqual({ status: 204 });
    expect(dns.calls).toEqual([]);
  });

  it('delivers over ::1 when it is allow-listed', async (ctx) => {
    const server = await serve(undefined, '::1').catch(() => undefined);
    if (server === undefined) return ctx.skip(); // no IPv6 loopback on this host
    const dns = fakeDns([{ address: '::1', family: 6 }]);
    expect(await post(agentFor(WITH_LOOPBACK, dns), new URL(`http://${HOST}:${server.port}/`))).toEqual({ status: 204 });
    expect(server.hits).toHaveLength(1);
  });

  it('refuses a name resolving to loopback when loopback is not allow-listed', async () => {
    const server = await serve();
    const dns = fakeDns([LOOPBACK]);
    // The URL itself is fine: only the connect-time answer gives it away.
    const url = checkWebhookUrl(`http://${HOST}:${server.port}/push`, NO_LOOPBACK);
    const err = await expectCodeAsync(post(agentFor(NO_LOOPBACK, dns), url), 'deny');
    expect(err.details).toEqual({ host: HOST }); // no resolved address leaks into the error
    expect(dns.calls).toEqual([HOST]);
    expect(server.hits).toHaveLength(0);
  });

  it('refuses an IP literal that skipped checkWebhookUrl', async () => {
    const server = await serve();
    const dns = fakeDns([LOOPBACK]);
    await expectCodeAsync(post(agentFor(NO_LOOPBACK, dns), new URL(`http://127.0.0.1:${server.port}/`)), 'deny');
    await expectCodeAsync(post(agentFor(NO_LOOPBACK, dns), new URL(`http://[::ffff:127.0.0.1]:${server.port}/`)), 'deny');
    expect(dns.calls).toEqual([]);
    expect(server.hits).toHaveLength(0);
  });

  it.each([
    ['public first', [PUBLIC, LOOPBACK]],
    ['loopback first', [LOOPBACK, PUBLIC]],
    ['v6 loopback among v4', [PUBLIC, { address: '::1', family: 6 } as const]],
  ])('refuses a mixed answer outright (%s)', async (_order, answer) => {
    const server = await serve();
    const dns = fakeDns(answer);
    await expectCodeAsync(post(agentFor(NO_LOOPBACK, dns), new URL(`http://${HOST}:${server.port}/`)), 'deny');
    expect(server.hits).toHaveLength(0);
  });

  it('judges the address of each new connection: a rebinding name cannot reach loopback', async () => {
    // Registration-time validation sees a public address; delivery-time DNS
    // says 127.0.0.1. The first answer is consumed here and never dialled.
    const internal = await serve();
    const dns = fakeDns([PUBLIC], [LOOPBACK]);
    const url = checkWebhookUrl(`http://${HOST}:${internal.port}/admin`, NO_LOOPBACK);
    const atRegistration = await dns(HOST);
    expect(atRegistration.every((a) => addressAllowed(a.address, NO_LOOPBACK))).toBe(true);

    await expectCodeAsync(post(agentFor(NO_LOOPBACK, dns), url), 'deny');
    expect(dns.calls).toHaveLength(2); // the agent resolved again, at connect time
    expect(internal.hits).toHaveLength(0);
  });

  it('judges the address of each new connection: allowed once, refused after rebinding', async () => {
    // 127.0.0.2 plays the integrator's allowed host, 127.0.0.1 the internal
    // service the name is later pointed at. Both listen on one port, as a
    // rebinding target would.
    const policy: WebhookPolicy = { allowHttp: true, allow: ['127.0.0.2/32'] };
    const { legit, internal } = await twoServersOnOnePort((_req, res) => res.writeHead(200, { connection: 'close' }).end('ok'));
    const dns = fakeDns([{ address: '127.0.0.2', family: 4 }], [LOOPBACK]);
    const agent = agentFor(policy, dns);
    const url = checkWebhookUrl(`http://${HOST}:${legit.port}/push`, policy);

    expect(await post(agent, url)).toEqual({ status: 200 });
    expect(legit.hits).toHaveLength(1);
    await expectCodeAsync(post(agent, url), 'deny');
    expect(dns.calls).toHaveLength(2);
    expect(internal.hits).toHaveLength(0);
  });
});

describe('postWebhook', () => {
  it('does not follow a redirect: the 3xx is the result', async () => {
    const target = await serve();
    const redirector = await serve((_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${target.port}/elsewhere` }).end());
    const url = checkWebhookUrl(`http://127.0.0.1:${redirector.port}/push`, WITH_LOOPBACK);
    expect(await post(agentFor(WITH_LOOPBACK), url)).toEqual({ status: 302 });
    expect(redirector.hits).toHaveLength(1);
    expect(target.hits).toHaveLength(0);
  });

  it('reports error statuses as statuses', async () => {
    const server = await serve((_req, res) => res.writeHead(503).end('busy'));
    expect(await post(agentFor(WITH_LOOPBACK), new URL(`http://127.0.0.1:${server.port}/`))).toEqual({ status: 503 });
  });

  it('times out a server that never answers, as unavailable', async () => {
    const server = await serve(() => undefined); // reads the request, never responds
    const started = Date.now();
    const err = await expectCodeAsync(post(agentFor(WITH_LOOPBACK), new URL(`http://127.0.0.1:${server.port}/`), { timeoutMs: 300 }), 'unavailable');
    expect(err.message).toMatch(/timed out/);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(server.hits).toHaveLength(1);
  });

  it('does not wait for an endless response body', async () => {
    const chunk = Buffer.alloc(16 * 1024, 0x61);
    const server = await serve((_req, res) => {
      res.writeHead(200);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    const started = Date.now();
    const url = new URL(`http://127.0.0.1:${server.port}/`);
    expect(await post(agentFor(WITH_LOOPBACK), url, { timeoutMs: 10_000, maxResponseBytes: 64 * 1024 })).toEqual({ status: 200 });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('drains a large but finite body and returns', async () => {
    const server = await serve((_req, res) => res.writeHead(200, { 'content-length': String(1024 * 1024) }).end(Buffer.alloc(1024 * 1024)));
    expect(await post(agentFor(WITH_LOOPBACK), new URL(`http://127.0.0.1:${server.port}/`))).toEqual({ status: 200 });
  });

  it('reports a refused connection as unavailable, not deny', async () => {
    const gone = await serve();
    await gone.close();
    const dns = fakeDns([LOOPBACK]);
    await expectCodeAsync(post(agentFor(WITH_LOOPBACK, dns), new URL(`http://${HOST}:${gone.port}/`)), 'unavailable');
  });

  it('reports a resolver failure or an empty answer as unavailable', async () => {
    const failing: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    await expectCodeAsync(post(agentFor(WITH_LOOPBACK, failing), new URL(`http://${HOST}:9/`)), 'unavailable');
    await expectCodeAsync(post(agentFor(WITH_LOOPBACK, fakeDns([])), new URL(`http://${HOST}:9/`)), 'unavailable');
  });

  it('bounds a resolver that never answers by the connect timeout', async () => {
    const hanging: Resolver = () => new Promise(() => undefined);
    const started = Date.now();
    await expectCodeAsync(post(agentFor(WITH_LOOPBACK, hanging, 200), new URL(`http://${HOST}:9/`), { timeoutMs: 10_000 }), 'unavailable');
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

/** Servers on 127.0.0.2 and 127.0.0.1 sharing a port; retries if the port is taken on .1. */
async function twoServersOnOnePort(handler: Handler): Promise<{ legit: TestServer; internal: TestServer }> {
  for (let attempt = 0; ; attempt++) {
    const legit = await serve(handler, '127.0.0.2');
    try {
      return { legit, internal: await serve(handler, '127.0.0.1', legit.port) };
    } catch (err) {
      await legit.close();
      if (attempt >= 4) throw err;
    }
  }
}
