import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { classify } from '../../src/gateway/path/classify.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBatonError } from '../../src/errors.ts';
import { RemoteClient, RemoteFailure, RemoteRpcError } from '../../src/gateway/remote.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const routes = new Map<string, Handler>();
let server: Server;
let base: string;
const remote = new RemoteClient({ limits: { headersTimeoutMs: 500, bodyTimeoutMs: 500, maxResponseBytes: 1024 } });

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => (routes.get(req.url ?? '') ?? ((_q, r) => r.writeHead(404).end()))(req, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const json = (body: string, type = 'application/json') => (_q: IncomingMessage, r: ServerResponse) => r.writeHead(200, { 'content-type': type }).end(body);
  routes.set('/ok', json('{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t"}}}'));
  routes.set('/rpc-error', json('{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found"}}'));
  routes.set('/dup', json('{"jsonrpc":"2.0","id":1,"result":{"a":1,"a":2}}'));
  routes.set('/garbage', json('<html>'));
  routes.set('/big', json(`{"jsonrpc":"2.0","id":1,"result":"${'x'.repeat(4096)}"}`));
  routes.set('/500', (_q, r) => r.writeHead(500).end('boom'));
  routes.set('/drop', (q) => q.socket.destroy());
  routes.set('/silent', () => {});
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  await remote.close();
});

async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

describe('RemoteClient', () => {
  it('returns the JSON-RPC result', async () => {
    expect(await remote.call(`${base}/ok`, 'SendMessage', {})).toEqual({ task: { id: 't' } });
  });

  it('a refused connection provably never transmitted', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const err = await failure(remote.call(`http://127.0.0.1:${port}/`, 'SendMessage', {}));
    expect(err).toBeInstanceOf(RemoteFailure);
    expect((err as RemoteFailure).transmitted).toBe(false);
  });

  it.each([
    ['a dropped connection', '/drop'],
    ['no answer within the header timeout', '/silent'],
    ['an HTTP 500', '/500'],
    ['malformed JSON', '/garbage'],
    ['duplicate JSON keys', '/dup'],
  ])('%s counts as possibly delivered', async (_name, path) => {
    const err = await failure(remote.call(`${base}${path}`, 'SendMessage', {}));
    expect(err).toBeInstanceOf(RemoteFailure);
    expect((err as RemoteFailure).transmitted).toBe(true);
  });

  it('bounds the response size: an answer too large to read was transmitted, so its effect is uncertain (issue #25 item 17)', async () => {
    const err = await failure(remote.call(`${base}/big`, 'SendMessage', {}));
    expect(err).toBeInstanceOf(RemoteFailure);
    expect((err as RemoteFailure).transmitted).toBe(true);
    expect(isBatonError((err as RemoteFailure).cause, 'limit_exceeded')).toBe(true);
    expect(classify(err).kind).toBe('uncertain');
  });

  it('surfaces the remote JSON-RPC error with its code, for calls and for streams', async () => {
    const err = await failure(remote.call(`${base}/rpc-error`, 'GetTask', {}));
    expect(err).toBeInstanceOf(RemoteRpcError);
    expect((err as RemoteRpcError).code).toBe(-32001);
    const streamErr = await failure(remote.stream(`${base}/rpc-error`, 'SendStreamingMessage', {}));
    expect((streamErr as RemoteRpcError).code).toBe(-32001);
  });

  it('holds more concurrent calls and streams than an event target warns about without a listener-leak warning', async () => {
    // Every call and effect stream listens on the client's one shutdown signal while it runs (RemoteClient.abortAll).
    const held: ServerResponse[] = [];
    let opened!: () => void;
    const all = new Promise<void>((r) => (opened = r));
    routes.set('/sse', (_q, r) => {
      r.writeHead(200, { 'content-type': 'text/event-stream' }).write(': open\n\n');
      if (held.push(r) === 24) opened();
    });
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const streams = Array.from({ length: 24 }, () => remote.stream(`${base}/sse`, 'SendStreamingMessage', {}));
      await all;
      for (const res of await Promise.all(streams)) res.body.resume();
      for (const r of held) r.end();
      // Warnings are emitted on the next tick: one more turn of the loop, then none may have come.
      await new Promise((r) => setImmediate(r));
      expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
      routes.delete('/sse');
    }
  });

  it('closes an idle connection before the delegatee would: an SSE answer carries no Keep-Alive hint to go by', async () => {
    // The A2A SDK's SSE answer sets its own Connection header, so Node sends no `Keep-Alive: timeout=`; a server
    // that closes the idle socket first races Baton's next request on it (ECONNRESET: an uncertain effect).
    const sse = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/event-stream', connection: 'keep-alive' }).end('data: {}\n\n'));
    });
    sse.keepAliveTimeout = 3_000; // ten times the client's: a loaded machine's timer lag cannot reverse the order
    await new Promise<void>((r) => sse.listen(0, '127.0.0.1', r));
    const client = new RemoteClient({ limits: { keepAliveMs: 300 } });
    try {
      const closed = new Promise<{ byClient: boolean }>((resolve) =>
        sse.once('connection', (socket) => {
          let byClient = false;
          socket.once('end', () => (byClient = true)); // the peer's FIN: the client let go first
          socket.once('close', () => resolve({ byClient }));
        }),
      );
      const res = await client.stream(`http://127.0.0.1:${(sse.address() as AddressInfo).port}/`, 'SendStreamingMessage', {});
      expect(res.headers['keep-alive']).toBeUndefined();
      await res.body.text();
      expect(await closed).toEqual({ byClient: true });
    } finally {
      await client.close();
      sse.closeAllConnections();
      await new Promise<void>((r) => sse.close(() => r()));
    }
  });

  it('keeps idle connections for less than a Node server keeps them by default', () => {
    expect(new RemoteClient().limits.keepAliveMs).toBeLessThan(createServer().keepAliveTimeout);
  });
});
