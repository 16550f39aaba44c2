/**
 * Baton's A2A front door. Each delegatee is served as an agent of its own
 * under /agents/<id>: a Baton-signed card, a JSON-RPC and an HTTP+JSON
 * binding (the SDK's express adapters around Baton's handler). A client that
 * speaks only A2A talks to Baton exactly as it would to the agent itself.
 */
import type { AgentCard } from '@a2a-js/sdk';
import { jsonRpcHandler, restHandler, type UserBuilder } from '@a2a-js/sdk/server/express';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { BatonError } from '../errors.ts';
import type { AuthThrottle } from '../http/auth-throttle.ts';
import { bodyTooLarge, noSuchRoute } from '../http/error-map.ts';
import { serveDocument } from '../http/well-known.ts';
import type { Logger } from '../log.ts';
import { parseStrictJson, type JsonValue } from '../records/strict-json.ts';
import { ParseError, restStatusNames, sendA2AError, type Binding } from './a2a-error.ts';
import { BatonA2AHandler, type RequestFacts } from './a2a-handler.ts';
import type { Caller, CallerAuthenticator } from './callers.ts';
import { callerLeft } from './caller-scope.ts';
import { authenticateRequest } from './authenticate.ts';
import { BASE64 } from './path/validate.ts';
import type { DelegateeRegistry } from './delegatees.ts';
import type { Dispatcher } from './dispatcher.ts';
import type { ProxyCards } from './proxy-card.ts';
import type { PushRegistry } from '../push/registry.ts';
import { requestSpan } from '../telemetry/tracing.ts';

type Json = { [key: string]: JsonValue };

export interface GatewayRouterDeps {
  dispatcher: Dispatcher;
  delegatees: DelegateeRegistry;
  auth: CallerAuthenticator;
  cards: ProxyCards;
  /** Baton's own signed card (SDK form), served at /.well-known and checked by the SDK per request. */
  ownCard: () => Promise<AgentCard>;
  ownExtendedCard: (caller: Caller) => Promise<AgentCard>;
  logger: Logger;
  /** Largest request body accepted on the front door. */
  maxBodyBytes?: number;
  /** Integrators' webhooks (A2A push-config operations); absent when push is disabled. */
  push?: PushRegistry;
  /** Refuses a source after too many failed credentials (src/http/auth-throttle.ts). */
  throttle?: AuthThrottle;
}

export function gatewayRouter(deps: GatewayRouterDeps): Router {
  const router = Router();
  const facts = new WeakMap<object, RequestFacts>();
  const cardOf = (id: string) => deps.cards.get(id);
  const limit = deps.maxBodyBytes ?? 1024 * 1024;

  const userBuilder: UserBuilder = async (req) => {
    const f = facts.get(req.headers);
    return { get isAuthenticated() { return f !== undefined; }, get userName() { return f?.caller.id ?? ''; } };
  };
  // v0.3 callers go through the SDK's compatibility layer (A2A-Version 0.3, or none: A2A §3.6.1) into the same handler.
  const legacyCompat = { enabled: true };
  // One handler per binding: it renders errors for the binding it serves. Each binding's chain is a router of its
  // own, one layer of `on`: a request for another path is matched against it once, not once per step (issue #24).
  const mountOn = (on: Router, base: string, handler: (transport: Binding) => BatonA2AHandler, delegatee?: string) => {
    on.use(`${base}/a2a/jsonrpc`, Router().use(requestSpan('jsonrpc', delegatee), authenticate(deps, facts, 'jsonrpc'), ...strictBody(limit, 'jsonrpc'), legacyFileBytes('jsonrpc'), stash(facts, 'jsonrpc'), jsonRpcHandler({ requestHandler: handler('jsonrpc'), userBuilder, legacyCompat })));
    on.use(`${base}/a2a/rest`, Router().use(requestSpan('rest', delegatee), authenticate(deps, facts, 'rest'), ...strictBody(limit, 'rest'), legacyFileBytes('rest'), stash(facts, 'rest'), restStatusNames, legacyRoutesOnly, restHandler({ requestHandler: handler('rest'), userBuilder, legacyCompat }), noRoute));
  };
  // Baton's own card advertises /a2a/*: a message there names its delegatee in metadata.
  mountOn(router, '', (transport) => new BatonA2AHandler({ card: deps.ownCard, extendedCard: deps.ownExtendedCard, push: deps.push }, deps.dispatcher, facts, transport));
  // Delegatees are looked up per request, not mounted once: a reload may add or remove them (README "Reloading without a restart").
  const perDelegatee = new Map<string, Router>();
  const delegateeRouter = (id: string): Router => {
    let sub = perDelegatee.get(id);
    if (sub) return sub;
    sub = Router();
    // As Baton's own card (A2A §8.6.1): exact bytes, ETag, Last-Modified, conditional GET; a refusal is never cacheable.
    sub.get('/.well-known/agent-card.json', async (req, res) => {
      try {
        serveDocument(req, res, (await cardOf(id)).doc, 'public, max-age=60');
      } catch (err) {
        sendA2AError(res, err, 'rest');
      }
    });
    mountOn(sub, '', (transport) => new BatonA2AHandler({ delegatee: id, card: () => deps.cards.forTransport(id), push: deps.push }, deps.dispatcher, facts, transport), id);
    perDelegatee.set(id, sub);
    return sub;
  };
  router.use('/agents/:delegatee', (req, res, next) => {
    const id = String(req.params.delegatee);
    if (!deps.delegatees.has(id)) return next();
    delegateeRouter(id)(req, res, next);
  });
  return router;
}

/**
 * A2A §3.6.1: a request without `A2A-Version` is a v0.3 request, on both
 * bindings. The SDK routes JSON-RPC so; on HTTP+JSON it would fall through
 * from the v0.3 routes (`/v1/…`) to the v1.0 ones and serve a header-less
 * request as v1.0. Here it finds only v0.3's routes.
 */
function legacyRoutesOnly(req: Request, res: Response, next: NextFunction): void {
  if (!isLegacyRequest(req) || req.path.startsWith('/v1/')) return next();
  sendA2AError(res, noSuchRoute('no A2A v0.3 route serves this path: a request without A2A-Version is A2A 0.3 (A2A §3.6.1); send A2A-Version: 1.0 for the v1.0 binding'), 'rest');
}

/** A path under the HTTP+JSON binding that no route serves: a google.rpc.Status like every other error there (A2A §11.6). */
function noRoute(_req: Request, res: Response): void {
  sendA2AError(res, noSuchRoute('no A2A route serves this path'), 'rest');
}

/** Verifies the caller's credentials before any A2A processing; 401 without them (./authenticate.ts). */
function authenticate(deps: GatewayRouterDeps, facts: WeakMap<object, RequestFacts>, transport: Binding) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const r = await authenticateRequest(req, deps, transport);
    if ('refusal' in r) {
      if (r.retryAfter) res.setHeader('Retry-After', r.retryAfter);
      return sendA2AError(res, r.refusal, transport);
    }
    facts.set(req.headers, { caller: r.caller, callerLeft: () => callerLeft(res) });
    next();
  };
}

/**
 * Strict JSON at the edge (DESIGN "Strict JSON at every edge"): duplicate
 * keys, lone surrogates and oversize bodies are refused before the SDK sees
 * the request, so Baton and the delegatee can never read the same bytes two
 * ways. The SDK's own parser then finds the body already parsed and skips.
 */
function strictBody(limit: number, transport: Binding) {
  const raw = express.raw({ limit, type: ['application/json', 'application/a2a+json'] });
  const parse = (req: Request, res: Response, next: NextFunction) => {
    if (!Buffer.isBuffer(req.body)) return next();
    try {
      req.body = req.body.length === 0 ? {} : parseStrictJson(req.body, { maxBytes: limit });
      // A2A §11 (HTTP+JSON): every request body is a JSON object; a bare string or array is the caller's mistake, not ours.
      if (transport === 'rest' && (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body))) {
        throw new BatonError('invalid_request', 'request body must be a JSON object');
      }
      next();
    } catch (err) {
      const e = err instanceof BatonError ? err : new BatonError('invalid_request', 'request body is not strict JSON');
      // JSON-RPC 2.0 §5.1: an unparsable request is -32700; a size bound keeps its own code.
      sendA2AError(res, transport === 'jsonrpc' && e.code === 'invalid_request' ? new ParseError(e.message) : e, transport);
    }
  };
  const tooLarge = (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if ((err as { status?: number }).status !== 413) return next(err);
    // 413 on HTTP+JSON (src/http/error-map.ts bodyTooLarge); JSON-RPC errors travel in a 200 with -32055.
    sendA2AError(res, bodyTooLarge(limit), transport);
  };
  return [raw, tooLarge, parse] as const;
}

/**
 * A2A v0.3 file parts carry their bytes as base64 (`file.bytes`; ProtoJSON
 * `fileWithBytes` on HTTP+JSON). The SDK's v0.3 layer decodes whatever it is
 * given, silently dropping what is not base64, so altered bytes would be
 * forwarded where v1.0 (`raw`, src/gateway/path/validate.ts) refuses them:
 * refused here the same way (issue #25 item 19).
 */
function legacyFileBytes(transport: Binding) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!isLegacyRequest(req)) return next();
    const body = req.body as Json | undefined;
    const message = ((transport === 'jsonrpc' ? (body?.params as Json | undefined) : body)?.message ?? undefined) as Json | undefined;
    const parts = [message?.parts, message?.content].flatMap((p) => (Array.isArray(p) ? p : []));
    const bad = parts.some((p) => {
      const file = p && typeof p === 'object' && !Array.isArray(p) ? (p.file as Json | undefined) : undefined;
      const bytes = file && typeof file === 'object' && !Array.isArray(file) ? (file.bytes ?? file.fileWithBytes) : undefined;
      return bytes !== undefined && (typeof bytes !== 'string' || !BASE64.test(bytes));
    });
    if (!bad) return next();
    sendA2AError(res, new BatonError('invalid_request', 'file bytes must be base64 (A2A v0.3 FileWithBytes)'), transport, transport === 'jsonrpc' ? rpcId(body) : null);
  };
}

const rpcId = (body: Json | undefined): string | number | null => (typeof body?.id === 'string' || typeof body?.id === 'number' ? body.id : null);

/**
 * Keeps the raw params so forwarding preserves fields the SDK's codecs would
 * drop — for A2A v1.0 requests only: a v0.3 request's params are v0.3-shaped
 * and are forwarded as the compatibility layer translated them.
 */
function stash(facts: WeakMap<object, RequestFacts>, transport: Binding) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const f = facts.get(req.headers);
    if (isLegacyRequest(req)) return next();
    const body = req.body as Json | undefined;
    const raw = transport === 'jsonrpc' ? (body?.params as Json | undefined) : body;
    if (f && raw && typeof raw === 'object' && !Array.isArray(raw)) f.raw = raw;
    next();
  };
}

/** The SDK's rule for routing into its v0.3 layer: `A2A-Version` 0.3, or absent (A2A §3.6.1). */
export function isLegacyRequest(req: Request): boolean {
  return (req.header('a2a-version') || '0.3') === '0.3';
}
