/**
 * The listener's requests and responses are born with their express app's
 * prototypes (src/http/listener.ts `serveApp`), so express's per-request
 * `Object.setPrototypeOf` changes nothing: with it, nearly everything a
 * request allocated was promoted out of V8's young generation (issue #24,
 * session 32). Asserted where the prototype is decided, on the `request`
 * event before express runs; a promotion count is a benchmark, not a test.
 */
import { IncomingMessage, ServerResponse, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { Config } from '../../src/config.ts';
import { createListener, listen, serveApp } from '../../src/http/listener.ts';
import { startGateway } from '../../src/main.ts';

const timeouts = { headersTimeoutMs: 5_000, requestTimeoutMs: 10_000, keepAliveTimeoutMs: 1_000 };
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** The prototypes of the next request and response `server` emits, as they arrive (before any app runs). */
function nextBorn(server: Server): Promise<{ req: object | null; res: object | null }> {
  return new Promise((resolve) => server.prependOnceListener('request', (req, res) => resolve({ req: Object.getPrototypeOf(req) as object | null, res: Object.getPrototypeOf(res) as object | null })));
}

function app(name: string): express.Express {
  const a = express();
  a.get('/who', (req, res) => void res.json({ app: name, path: req.path, query: req.query }));
  return a;
}

async function started(server: Server): Promise<string> {
  servers.push(server);
  return listen(server, 0, '127.0.0.1');
}

describe('listener: requests born with their app’s prototypes', () => {
  it('gives each request and response the express app’s own prototypes, and express still answers', async () => {
    const a = app('a');
    const server = createListener(timeouts, a);
    const url = await started(server);
    const born = nextBorn(server);
    const res = await fetch(`${url}/who?x=1`);
    expect(await res.json()).toEqual({ app: 'a', path: '/who', query: { x: '1' } });
    expect(await born).toEqual({ req: a.request, res: a.response });
    // Still Node's own objects underneath.
    expect(a.request).toBeInstanceOf(IncomingMessage);
    expect(a.response).toBeInstanceOf(ServerResponse);
  });

  it('keeps Node’s prototypes until an app is served, then takes that app’s (the gateway answers 503 while it starts)', async () => {
    const server = createListener(timeouts);
    const starting = (_req: IncomingMessage, res: ServerResponse) => void res.writeHead(503).end();
    server.on('request', starting);
    const url = await started(server);
    let born = nextBorn(server);
    expect((await fetch(`${url}/who`)).status).toBe(503);
    expect(await born).toEqual({ req: IncomingMessage.prototype, res: ServerResponse.prototype });

    const b = app('b');
    server.off('request', starting);
    serveApp(server, b);
    born = nextBorn(server);
    expect(await (await fetch(`${url}/who`)).json()).toMatchObject({ app: 'b' });
    expect(await born).toEqual({ req: b.request, res: b.response });
  });

  it('gives two listeners in one process their own apps’ prototypes', async () => {
    const [a, b] = [app('a'), app('b')];
    const [sa, sb] = [createListener(timeouts, a), createListener(timeouts, b)];
    const [ua, ub] = [await started(sa), await started(sb)];
    const [ba, bb] = [nextBorn(sa), nextBorn(sb)];
    expect(await (await fetch(`${ua}/who`)).json()).toMatchObject({ app: 'a' });
    expect(await (await fetch(`${ub}/who`)).json()).toMatchObject({ app: 'b' });
    expect((await ba).req).toBe(a.request);
    expect((await bb).req).toBe(b.request);
    expect(a.request).not.toBe(b.request);
  });

  it('the gateway’s public listener serves its app so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-listener-'));
    const gw = await startGateway(Config.parse({ port: 0, dataDir: dir, logLevel: 'silent' }));
    try {
      const born = nextBorn(gw.server);
      expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
      const { req, res } = await born;
      // express's request prototype: the app's own object, whose prototype chain reaches Node's.
      expect(req).not.toBe(IncomingMessage.prototype);
      expect(Object.getPrototypeOf(Object.getPrototypeOf(req))).toBe(IncomingMessage.prototype);
      expect(Object.getPrototypeOf(Object.getPrototypeOf(res))).toBe(ServerResponse.prototype);
    } finally {
      await gw.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
