/**
 * The HTTP listeners' lifecycle: time limits on every connection, listening
 * only once the app can answer, and a bounded drain on shutdown.
 */
import { createServer, IncomingMessage, ServerResponse, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ServerTimeouts {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

/** An express app, as far as {@link serveApp} needs it: the prototypes it gives each request and response. */
type App = RequestListener & { request?: object; response?: object };

/**
 * Each listener's request and response classes: Node's own, constructed with
 * a prototype the listener's app sets (Node's `IncomingMessage` and
 * `ServerResponse` server options). Express gives every request and response
 * its app's prototypes with `Object.setPrototypeOf` (express
 * lib/application.js `handle`); V8 does nothing when the prototype is already
 * the one asked for. After that switch a request's objects (headers, the
 * access log's child loggers, the router's closures) outlived the young
 * generation, so only a full collection freed them. Measured with
 * `--trace-gc-nvp`, promoted per request: /healthz 18 → 2.4 KB, a delegated
 * call at c=1 79 → 64 KB (issue #24, session 32). Why V8 keeps them is not
 * known; CPU per delegated call did not measurably change.
 */
const born = new WeakMap<Server, { request: { prototype: object }; response: { prototype: object } }>();

/** A constructor for `base`'s objects whose prototype is whatever its `prototype` says at construction. */
function bornOf(base: new (...args: never[]) => object): { prototype: object } {
  function Born(...args: unknown[]): object {
    return Reflect.construct(base, args, Born) as object;
  }
  Born.prototype = base.prototype;
  return Born;
}

/** Answers the server's requests with `app`; an express app's requests are then born with its prototypes. */
export function serveApp(server: Server, app: App): void {
  const classes = born.get(server);
  if (classes && app.request && app.response) {
    classes.request.prototype = app.request;
    classes.response.prototype = app.response;
  }
  server.on('request', app);
}

/** A server whose slow or idle clients are cut by the configured limits (Node's defaults allow 300 s per request). */
export function createListener(timeouts: ServerTimeouts, app?: App): Server {
  const classes = { request: bornOf(IncomingMessage), response: bornOf(ServerResponse) };
  const server = createServer({
    IncomingMessage: classes.request as typeof IncomingMessage,
    ServerResponse: classes.response as typeof ServerResponse,
    requestTimeout: timeouts.requestTimeoutMs,
    // Node rejects a headers timeout longer than the request timeout.
    headersTimeout: Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs),
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    // How often those limits are checked (Node's default is every 30 s).
    connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(timeouts.headersTimeoutMs / 2))),
  });
  born.set(server, classes);
  if (app) serveApp(server, app);
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
