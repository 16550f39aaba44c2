/**
 * Stopping to read a delegatee's stream at its terminal event (src/gateway/stream-end.ts),
 * against a real SSE server on loopback and a real undici pool: a stream whose end
 * arrives after the terminal event leaves its connection in the pool; a stream that
 * never ends, or whose tail is too long, is closed after all.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseSse } from '../../src/gateway/sse.ts';
import { closeStream, finishStream, readerOf } from '../../src/gateway/stream-end.ts';

const TERMINAL = `data: ${JSON.stringify({ jsonrpc: '2.0', id: 1, result: { task: { id: 't', status: { state: 'TASK_STATE_COMPLETED' } } } })}\n\n`;
/** What each path does after the terminal event (the default: end 100 ms later). */
let after: (res: ServerResponse) => void;
let server: Server;
let base: string;
/** The connections that carried this test's requests (a pool from an earlier test may still be connecting). */
let sockets: Socket[] = [];
const agents: Agent[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    if (!sockets.includes(req.socket)) sockets.push(req.socket);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(TERMINAL);
    after(res);
  });
  server.on('connection', (s: Socket) => s.on('error', () => {})); // a client closing a stream it stopped reading resets its socket
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.destroy()));
  sockets = [];
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

/** One streamed turn, read up to its terminal event; `stop` is what the reader does then. */
async function turn(agent: Agent, stop: (body: AsyncIterable<Uint8Array>) => void): Promise<string> {
  const { body } = await request(`${base}/`, { method: 'POST', dispatcher: agent, body: '{}' });
  let state = '';
  for await (const ev of parseSse(readerOf(body))) {
    state = (JSON.parse(ev.data) as { result: { task: { status: { state: string } } } }).result.task.status.state;
    if (state === 'TASK_STATE_COMPLETED') break;
  }
  stop(body);
  return state;
}

/** The server's side of a connection closes (its 'error', a reset, comes first when the client is gone). */
const closed = (s: Socket) => new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r())));

const pool = () => {
  const a = new Agent({ connections: 1, keepAliveTimeout: 10_000 });
  agents.push(a);
  return a;
};

describe('a stream read up to its terminal event', () => {
  it('whose end comes after the event: the connection goes back to the pool and serves the next turn', async () => {
    after = (res) => setTimeout(() => res.end(), 100);
    const agent = pool();
    expect(await turn(agent, (b) => finishStream(b))).toBe('TASK_STATE_COMPLETED');
    expect(await turn(agent, (b) => finishStream(b))).toBe('TASK_STATE_COMPLETED');
    expect(sockets).toHaveLength(1);
  });

  it('closed instead (the old way): every turn needs a new connection', async () => {
    after = (res) => setTimeout(() => res.end(), 100);
    const agent = pool();
    await turn(agent, closeStream);
    await turn(agent, closeStream);
    expect(sockets).toHaveLength(2);
  });

  it('that never ends: closed once the tail time is up, and the next turn gets a connection of its own', async () => {
    after = () => {};
    const agent = pool();
    await turn(agent, (b) => finishStream(b, { bytes: 64 * 1024, ms: 200 }));
    await closed(sockets[0]!);
    expect(await turn(agent, (b) => finishStream(b, { bytes: 64 * 1024, ms: 200 }))).toBe('TASK_STATE_COMPLETED');
    expect(sockets).toHaveLength(2);
  });

  it('whose tail runs past the byte bound: closed without waiting for the time', async () => {
    after = (res) => {
      const chunk = `: ${'x'.repeat(16 * 1024)}\n`;
      const pump = () => {
        while (res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    };
    const agent = pool();
    await turn(agent, (b) => finishStream(b, { bytes: 64 * 1024, ms: 60_000 }));
    await closed(sockets[0]!);
  });
});
