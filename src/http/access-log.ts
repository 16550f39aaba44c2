/**
 * The access log: one line per request on the public and operator listeners
 * (pino-http), with a request id (the caller's X-Request-Id when it is a sane
 * token, else a fresh one; always echoed back), the authenticated caller, the
 * delegatee and binding, the operation, the status, the ADR-0014 code of an
 * error response and the latency. Headers and bodies are never logged: the
 * code is read from the error body Baton already rendered (its ErrorInfo),
 * so no renderer has to know about logging.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pinoHttp } from 'pino-http';
import type { RequestHandler } from 'express';
import type { CallerAuthenticator } from '../gateway/callers.ts';
import type { Logger } from '../log.ts';
import { errorCodeOf } from './error-code.ts';

const SANE_ID = /^[A-Za-z0-9._:@-]{1,128}$/;
/** Error bodies are small; a longer body (an artifact, a list) is never an error and is not kept. */
const MAX_CAPTURE = 16 * 1024;

const callers = new WeakMap<object, string>();

/** Notes who a request authenticated as (keyed by its headers object, which every layer shares). */
export function noteCaller(headers: object, id: string): void {
  callers.set(headers, id);
}

/** An authenticator that also notes the caller for the access log. */
export function notingCaller(auth: CallerAuthenticator): CallerAuthenticator {
  return {
    authenticate: async (headers) => {
      const caller = await auth.authenticate(headers);
      if (caller) noteCaller(headers, caller.id);
      return caller;
    },
  };
}

/** What the access log knows of one finished request (also handed to `observe`, e.g. request metrics). */
export type AccessLine = ReturnType<typeof line>;

/** Express middleware writing one access-log line per request to `logger` (and to `observe`, when given). */
export function accessLog(logger: Logger, observe?: (l: AccessLine) => void): RequestHandler[] {
  const seen = (l: AccessLine) => (observe?.(l), l);
  const http = pinoHttp({
    logger,
    quietReqLogger: true,
    quietResLogger: true,
    // pino-http binds every request to a logger of the whole request (headers and socket read, redacted,
    // stringified) before the handler runs, even with both its loggers quiet as here, when that logger is never
    // written to. Its serializer returns nothing, so the binding is skipped; nothing here logs a request, response
    // or error object. Issue #24: that binding cost ~6 µs a request (timed alone), on every route.
    wrapSerializers: false,
    serializers: { req: () => undefined },
    customAttributeKeys: { reqId: 'request_id' },
    genReqId: (req, res) => {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && SANE_ID.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessMessage: () => 'request',
    customErrorMessage: () => 'request',
    customSuccessObject: (req, res, base: { responseTime?: number }) => seen(line(req, res, base.responseTime)),
    customErrorObject: (req, res, _err, base: { responseTime?: number }) => seen(line(req, res, base.responseTime)),
  });
  return [captureErrorBody, http as unknown as RequestHandler];
}

interface Captured {
  chunks: Buffer[];
  size: number;
}
const bodies = new WeakMap<ServerResponse, Captured>();

/** Keeps the first bytes of JSON responses (JSON-RPC errors travel in a 200) so the line can name the error code. */
const captureErrorBody: RequestHandler = (_req, res, next) => {
  const kept: Captured = { chunks: [], size: 0 };
  bodies.set(res, kept);
  const keep = (chunk: unknown, encoding?: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function' || kept.size > MAX_CAPTURE) return;
    if (!/json/.test(String(res.getHeader('content-type') ?? ''))) return;
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
    kept.chunks.push(buf);
    kept.size += buf.length;
  };
  const write = res.write.bind(res) as (...a: unknown[]) => boolean;
  const end = res.end.bind(res) as (...a: unknown[]) => ServerResponse;
  res.write = ((...a: unknown[]) => (keep(a[0], a[1]), write(...a))) as typeof res.write;
  res.end = ((...a: unknown[]) => (keep(a[0], a[1]), end(...a))) as typeof res.end;
  next();
};

/** The ADR-0014 code of the error a finished response carried, if any (the console's charts count refusals by it). */
export function errorCodeOfResponse(res: ServerResponse): string | undefined {
  const kept = bodies.get(res);
  return kept && kept.size > 0 && kept.size <= MAX_CAPTURE ? errorCodeOf(Buffer.concat(kept.chunks), res.statusCode) : undefined;
}

type Binding = 'jsonrpc' | 'rest' | 'mcp' | 'well-known' | 'admin' | 'health' | 'webhook' | 'other';

/** The delegatee a public route addresses: an agent at /agents/<id>/…, an MCP server at /mcp/<id> (issue #26). */
function delegateeOf(path: string): string | undefined {
  return (/^\/agents\/([^/]+)\//.exec(path) ?? /^\/mcp\/([^/]+)\/?$/.exec(path))?.[1];
}

function line(req: IncomingMessage, res: ServerResponse, latency: number | undefined) {
  // originalUrl: a mounted router strips its prefix from req.url while it runs.
  const path = ((req as { originalUrl?: string }).originalUrl ?? req.url ?? '/').split('?')[0] ?? '/';
  const binding = bindingOf(path);
  const kept = bodies.get(res);
  const code = kept && kept.size > 0 && kept.size <= MAX_CAPTURE ? errorCodeOf(Buffer.concat(kept.chunks), res.statusCode) : undefined;
  // No request_id here: pino-http already binds it (customAttributeKeys) to the line's logger, and a
  // second copy would make every line a JSON object with a duplicate key (issue #25 item 9).
  return {
    ...{}, ...(callers.has(req.headers) ? { caller: callers.get(req.headers) } : {}),
    ...(delegateeOf(path) ? { delegatee: delegateeOf(path) } : {}),
    binding,
    method: methodOf(req, path, binding),
    status: res.statusCode,
    ...(code ? { code } : {}),
    latency_ms: latency,
  };
}

function bindingOf(path: string): Binding {
  if (path.includes('/a2a/jsonrpc')) return 'jsonrpc';
  if (path.includes('/a2a/rest')) return 'rest';
  if (path.startsWith('/mcp/')) return 'mcp';
  if (path.startsWith('/admin/')) return 'admin';
  if (path === '/healthz' || path === '/readyz') return 'health';
  if (path.includes('/.well-known/') || path.endsWith('/extendedAgentCard')) return 'well-known';
  if (path.startsWith('/push/') || path.startsWith('/webhooks/')) return 'webhook';
  return 'other';
}

/** The JSON-RPC method (once the body was read: a refused credential's never is), else the HTTP method and the route with ids replaced (ids may be long and are in other fields). */
function methodOf(req: IncomingMessage, path: string, binding: Binding): string {
  const body = (req as { body?: unknown }).body;
  if (binding === 'jsonrpc' && typeof body === 'object' && body !== null && typeof (body as { method?: unknown }).method === 'string') return (body as { method: string }).method;
  const route = (req as { route?: { path?: unknown } }).route?.path;
  const template = typeof route === 'string' ? route : path.replace(/^\/agents\/[^/]+/, '/agents/:id').replace(/\/tasks\/[^/:]+/, '/tasks/:id');
  return `${req.method ?? 'GET'} ${template}`;
}
