/**
 * The HTTP listeners' lifecycle: time limits on every connection, listening
 * only once the app can answer, and a bounded drain on shutdown.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ServerTimeouts {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

/** A server whose slow or idle clients are cut by the configured limits (Node's defaults allow 300 s per request). */
export function createListener(timeouts: ServerTimeouts, app?: RequestListener): Server {
  const server = createServer({
    requestTimeout: timeouts.requestTimeoutMs,
    // Node rejects a headers timeout longer than the request timeout.
    headersTimeout: Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs),
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    // How often those limits are checked (Node's default is every 30 s).
    connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(timeouts.headersTimeoutMs / 2))),
  });
  if (app) server.on('request', app);
  trackInFlight(server);
  return server;
}

/** Listens and resolves with the bound URL. */
export async function listen(server: Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
}

const inFlight = new WeakMap<Server, { count: number; waiters: Array<() => void> }>();

function trackInFlight(server: Server): void {
  const state = { count: 0, waiters: [] as Array<() => void> };
  inFlight.set(server, state);
  server.on('request', (_req, res) => {
    state.count++;
    res.once('close', () => {
      if (--state.count === 0) for (const w of state.waiters.splice(0)) w();
    });
  });
}

/** Requests being answered right now (streams included). */
export function requestsInFlight(server: Server): number {
  return inFlight.get(server)?.count ?? 0;
}

/**
 * Stops accepting connections, closes idle keep-alive ones, and waits until
 * every request in flight has been answered or `deadlineMs` has passed;
 * then cuts whatever is still open. Resolves with how many requests were cut.
 */
export async function drain(servers: ReadonlyArray<Server | undefined>, deadlineMs: number): Promise<number> {
  const live = servers.filter((s): s is Server => s !== undefined && s.listening);
  const closed = live.map((s) => new Promise<void>((resolve) => s.close(() => resolve())));
  for (const s of live) s.closeIdleConnections();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, deadlineMs)));
  await Promise.race([Promise.all(live.map(idle)), deadline]);
  clearTimeout(timer);
  const cut = live.reduce((n, s) => n + requestsInFlight(s), 0);
  for (const s of live) s.closeAllConnections();
  await Promise.all(closed);
  return cut;
}

function idle(server: Server): Promise<void> {
  const state = inFlight.get(server);
  if (!state || state.count === 0) return Promise.resolve();
  // Keep-alive sockets that finish their last response must not keep the server open.
  return new Promise((resolve) => state.waiters.push(() => (server.closeIdleConnections(), resolve())));
}
