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
import { WIRE_CODES } from '../http/error-map.ts';
import type { Logger } from '../log.ts';
import { parseStrictJson, type JsonValue } from '../records/strict-json.ts';
import { BatonA2AHandler, binding, type RequestFacts } from './a2a-handler.ts';
import type { Caller, CallerAuthenticator } from './callers.ts';
import { bindCallerSignal } from './caller-scope.ts';
import type { DelegateeRegistry } from './delegatees.ts';
import type { Dispatcher } from './dispatcher.ts';
import type { ProxyCards } from './proxy-card.ts';
import type { PushRegistry } from '../push/registry.ts';

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
  const mount = (base: string, handler: BatonA2AHandler) => {
    router.use(`${base}/a2a/jsonrpc`, inBinding('jsonrpc'), authenticate(deps, facts, 'jsonrpc'), ...strictBody(limit, 'jsonrpc'), stash(facts, 'jsonrpc'), bindCallerSignal, jsonRpcHandler({ requestHandler: handler, userBuilder }));
    router.use(`${base}/a2a/rest`, inBinding('rest'), authenticate(deps, facts, 'rest'), ...strictBody(limit, 'rest'), stash(facts, 'rest'), bindCallerSignal, restHandler({ requestHandler: handler, userBuilder }));
  };
  // Baton's own card advertises /a2a/*: a message there names its delegatee in metadata.
  mount('', new BatonA2AHandler({ card: deps.ownCard, extendedCard: deps.ownExtendedCard, push: deps.push }, deps.dispatcher, facts));
  for (const id of deps.delegatees.ids()) {
    const base = `/agents/${id}`;
    router.get(`${base}/.well-known/agent-card.json`, async (_req, res, next) => {
      try {
        res.setHeader('Cache-Control', 'public, max-age=60');
        res.json((await cardOf(id)).json);
      } catch (err) {
        next(err);
      }
    });
    mount(base, new BatonA2AHandler({ delegatee: id, card: () => deps.cards.forTransport(id), push: deps.push }, deps.dispatcher, facts));
  }
  return router;
}

/** Everything downstream (the SDK and Baton's handler) runs knowing its binding, for error mapping. */
function inBinding(transport: 'jsonrpc' | 'rest') {
  return (_req: Request, _res: Response, next: NextFunction) => binding.run(transport, next);
}

/** Verifies the caller's credentials before any A2A processing; 401 without them. */
function authenticate(deps: GatewayRouterDeps, facts: WeakMap<object, RequestFacts>, transport: 'jsonrpc' | 'rest') {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const caller = await deps.auth.authenticate(req.headers);
      if (!caller) throw new BatonError('authentication_required', 'this gateway requires an API key or bearer token');
      facts.set(req.headers, { caller });
      next();
    } catch (err) {
      const e = err instanceof BatonError ? err : new BatonError('authentication_required', 'credentials were not accepted');
      res.status(401).setHeader('WWW-Authenticate', 'Bearer realm="baton", ApiKey header="X-API-Key"');
      res.json(
        transport === 'jsonrpc'
          ? { jsonrpc: '2.0', id: null, error: { code: WIRE_CODES[e.code].jsonRpc, message: e.message, data: { baton: e.code } } }
          : { error: { code: 401, status: 'UNAUTHENTICATED', message: e.message, details: [] } },
      );
    }
  };
}

/**
 * Strict JSON at the edge (DESIGN "Strict JSON at every edge"): duplicate
 * keys, lone surrogates and oversize bodies are refused before the SDK sees
 * the request, so Baton and the delegatee can never read the same bytes two
 * ways. The SDK's own parser then finds the body already parsed and skips.
 */
function strictBody(limit: number, transport: 'jsonrpc' | 'rest') {
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
      res.status(transport === 'jsonrpc' ? 200 : WIRE_CODES[e.code].http);
      res.json(
        transport === 'jsonrpc'
          ? { jsonrpc: '2.0', id: null, error: { code: -32700, message: e.message, data: { baton: e.code } } }
          : { error: { code: WIRE_CODES[e.code].http, status: 'INVALID_ARGUMENT', message: e.message, details: [] } },
      );
    }
  };
  const tooLarge = (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if ((err as { status?: number }).status !== 413) return next(err);
    res.status(transport === 'jsonrpc' ? 200 : 413).json(
      transport === 'jsonrpc'
        ? { jsonrpc: '2.0', id: null, error: { code: WIRE_CODES.limit_exceeded.jsonRpc, message: 'request body exceeds the size bound', data: { baton: 'limit_exceeded' } } }
        : { error: { code: 413, status: 'RESOURCE_EXHAUSTED', message: 'request body exceeds the size bound', details: [] } },
    );
  };
  return [raw, tooLarge, parse] as const;
}

/** Keeps the raw params so forwarding preserves fields the SDK's codecs would drop. */
function stash(facts: WeakMap<object, RequestFacts>, transport: 'jsonrpc' | 'rest') {
  return (req: Request, _res: Response, next: NextFunction) => {
    const f = facts.get(req.headers);
    const body = req.body as Json | undefined;
    const raw = transport === 'jsonrpc' ? (body?.params as Json | undefined) : body;
    if (f && raw && typeof raw === 'object' && !Array.isArray(raw)) f.raw = raw;
    next();
  };
}
