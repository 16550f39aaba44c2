/**
 * Upstream calls end: a byte-dripping agent cannot hold a call past its
 * deadline, a subscription ends when the caller who asked for it leaves, and
 * shutdown aborts whatever is still in flight. Real sockets on loopback.
 */
import { getEventListeners } from 'node:events';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { callerLeft } from '../../src/gateway/caller-scope.ts';
import { RemoteClient, RemoteFailure } from '../../src/gateway/remote.ts';

const servers: Server[] = [];
const timers: NodeJS.Timeout[] = [];
afterEach(async () => {
  for (const t of timers.splice(0)) clearInterval(t);
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const s = createServer(handler);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

/** Headers at once, then one byte of a never-ending JSON body every 20 ms: no idle timeout ever fires. */
function dripper(onClose?: () => void) {
  return (req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    res.writeHead(200, { 'content-type': req.headers.accept === 'text/event-stream' ? 'text/event-stream' : 'application/json' });
    res.write(req.headers.accept === 'text/event-stream' ? ': open\n\n' : '{"jsonrpc":"2.0","id":1,"result":"');
    timers.push(setInterval(() => res.write(req.headers.accept === 'text/event-stream' ? ': tick\n\n' : 'x'), 20));
    res.once('close', () => onClose?.());
  };
}

async function failureOf(p: Promise<unknown>): Promise<RemoteFailure> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(RemoteFailure);
    return err as RemoteFailure;
  }
  throw new Error('expected a RemoteFailure');
}

describe('remote call deadlines', () => {
  it('a byte-dripping agent is cut at the call deadline, as possibly delivered', async () => {
    const url = await serve(dripper());
    const remote = new RemoteClient({ limits: { headersTimeoutMs: 5_000, bodyTimeoutMs: 5_000, callDeadlineMs: 300 } });
    const f = await failureOf(remote.call(url, 'GetTask', { id: 't' }));
    expect(f).toMatchObject({ transmitted: true, reason: 'call deadline exceeded' });
    await remote.abortAll();
  });

  it('a call that ended leaves nothing pending: its deadline timer is cleared, its shutdown listener removed', async () => {
    const url = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"jsonrpc":"2.0","id":"GetTask","result":{"ok":true}}');
    });
    const remote = new RemoteClient({ limits: { callDeadlineMs: 600_000 } });
    const stopping = (remote as unknown as { stopping: AbortController }).stopping.signal;
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const during = remote.call(url, 'GetTask', { id: 't' });
    expect(timers()).toBe(before + 1);
    expect(getEventListeners(stopping, 'abort')).toHaveLength(1);
    expect(await during).toEqual({ ok: true });
    expect(timers()).toBe(before);
    expect(getEventListeners(stopping, 'abort')).toHaveLength(0);
    // A failed call lets go of them too.
    await expect(remote.call('http://127.0.0.1:1/', 'GetTask', {})).rejects.toBeInstanceOf(RemoteFailure);
    expect(timers()).toBe(before);
    expect(getEventListeners(stopping, 'abort')).toHaveLength(0);
    await remote.close();
  });

  it('abortAll ends a stream and a call in flight (shutdown does not wait for upstream)', async () => {
    let streamClosed!: () => void;
    const closed = new Promise<void>((r) => (streamClosed = r));
    const url = await serve(dripper(() => streamClosed()));
    const remote = new RemoteClient({ limits: { callDeadlineMs: 600_000, bodyTimeoutMs: 600_000, streamIdleMs: 600_000 } });
    const res = await remote.stream(url, 'SendStreamingMessage', {});
    const reading = (async () => {
      for await (const _ of res.body) void _;
    })().then(
      () => 'ended',
      () => 'aborted',
    );
    const call = failureOf(remote.call(url, 'GetTask', { id: 't' }));
    await remote.abortAll();
    await closed;
    expect(await reading).toBe('aborted');
    expect(await call).toMatchObject({ transmitted: true, reason: 'call aborted' });
  });

  it('a subscription relayed to a caller is closed upstream when that caller leaves', async () => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((r) => (upstreamClosed = r));
    const upstream = await serve(dripper(() => upstreamClosed()));
    const remote = new RemoteClient({ limits: { streamIdleMs: 600_000 } });
    let relaying!: () => void;
    const started = new Promise<void>((r) => (relaying = r));
    // A front door like Baton's: it opens the upstream stream with its caller's connection as the signal, and relays it.
    const front = await serve((_req, res) => {
      void (async () => {
        const up = await remote.stream(upstream, 'SubscribeToTask', { id: 't' }, {}, { caller: callerLeft(res) });
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        relaying();
        try {
          for await (const chunk of up.body) res.write(chunk);
        } catch {
          res.destroy();
        }
      })();
    });
    const caller = request(`${front}/`, { method: 'POST' });
    caller.on('error', () => {});
    caller.end();
    await started;
    caller.destroy(); // the caller leaves
    await closed; // without the caller's signal this waits for the 600 s idle timeout
    await remote.abortAll();
  });
});
