/**
 * The operator API: a separate listener from the A2A front door (its own
 * port, loopback by default), authenticated by operator API keys whose sha256
 * is configured. Every route is one OperatorService action; the acting
 * operator — never a name in the body — is recorded as the actor.
 */
import { operatorActorRef } from '../contracts/identities.ts';
import { createHash, timingSafeEqual } from 'node:crypto';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import type { z } from 'zod';
import { BatonError, invalidRequest, unsupported } from '../errors.ts';
import { noteCaller } from '../http/access-log.ts';
import { retryAfter, type AuthThrottle } from '../http/auth-throttle.ts';
import { noSuchRoute, sendHttpError, toBatonError } from '../http/error-map.ts';
import type { Logger } from '../log.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import { parseStrictJson } from '../records/strict-json.ts';
import type { OperatorService } from './service.ts';
import { bodies, queries, ROUTE_DOCS, ScopeKind } from './route-docs.ts';
import { apiDocsRouter } from './api-docs.ts';
import type { LiveConfig } from './reload.ts';
import { type OperatorConfig } from './identity.ts';

function parse<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const r = schema.safeParse(value ?? {});
  if (!r.success) throw invalidRequest('request body is malformed', { issues: r.error.issues.slice(0, 10).map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`) });
  return r.data;
}

export function operatorRouter(deps: { service: OperatorService; live?: LiveConfig; operators: readonly OperatorConfig[]; logger: Logger; throttle?: AuthThrottle }): Router {
  const router = Router();
  // The API's description and its reference page need no key: they describe routes, never data (README "Operating Baton").
  router.use(apiDocsRouter());
  const keys = deps.operators.map((o) => ({ id: o.id, digest: Buffer.from(o.apiKeySha256, 'hex') }));
  const who = new WeakMap<Request, ActorRef>();

  router.use((req: Request, res: Response, next: NextFunction) => {
    const throttled = deps.throttle?.refusal(req);
    if (throttled) {
      res.setHeader('Retry-After', retryAfter(throttled));
      return void sendHttpError(res, throttled);
    }
    const presented = req.get('x-api-key') ?? /^Bearer (.+)$/i.exec(req.get('authorization') ?? '')?.[1];
    const digest = presented === undefined ? undefined : createHash('sha256').update(presented).digest();
    const match = digest && keys.find((k) => k.digest.length === digest.length && timingSafeEqual(k.digest, digest));
    if (!match) {
      deps.throttle?.failed(req);
      res.setHeader('WWW-Authenticate', 'ApiKey header="X-API-Key"');
      return void sendHttpError(res, new BatonError('authentication_required', keys.length === 0 ? 'no operators are configured' : 'operator credentials required'));
    }
    who.set(req, operatorActorRef(match.id));
    noteCaller(req.headers, match.id);
    next();
  });
  router.use(express.raw({ type: () => true, limit: 64 * 1024 }), (req: Request, _res: Response, next: NextFunction) => {
    try {
      req.body = Buffer.isBuffer(req.body) && req.body.length > 0 ? parseStrictJson(req.body) : {};
      next();
    } catch (err) {
      next(err);
    }
  });

  type Handler = (req: Request, by: ActorRef) => Promise<unknown>;
  const route = (method: 'get' | 'post', path: string, handler: Handler, status = 200) => {
    const doc = ROUTE_DOCS[`${method.toUpperCase()} ${path}`];
    if (!doc) throw new TypeError(`operator route ${method} ${path} has no entry in ROUTE_DOCS`); // the OpenAPI document must cover it
    return router[method](path, async (req: Request, res: Response) => {
      try {
        res.status(status).json(await handler(req, who.get(req)!));
      } catch (err) {
        const e = toBatonError(err);
        if (e.code === 'storage_error') deps.logger.error({ err: e.cause ?? e, route: path }, 'operator action failed');
        sendHttpError(res, e);
      }
    });
  };
  const p = (req: Request, name: string) => String(req.params[name]);
  const s = deps.service;

  const limitOf = (req: Request, dflt: number) => {
    const n = Number(req.query.limit ?? dflt);
    return Number.isInteger(n) && n > 0 ? Math.min(n, 1000) : dflt;
  };
  route('get', '/admin/trees', (req) => s.trees(limitOf(req, 20)));
  route('get', '/admin/attempts/:id', (req) => s.attemptAudit(p(req, 'id')));
  route('post', '/admin/attempts/:id/checkpoint', (req, by) => s.checkpoint(p(req, 'id'), parse(bodies.reason, req.body).reason, by), 201);
  route('post', '/admin/delegations/:id/revoke', (req, by) => s.revokeDelegation(p(req, 'id'), parse(bodies.reason, req.body).reason, by));
  route('post', '/admin/delegations/:id/suspend', (req, by) => s.setDelegationLifecycle(p(req, 'id'), 'suspended', parse(bodies.reason, req.body).reason, by));
  route('post', '/admin/delegations/:id/resume', (req, by) => s.setDelegationLifecycle(p(req, 'id'), 'active', parse(bodies.reason, req.body).reason, by));
  route('post', '/admin/delegations/:id/amend', async (req, by) => {
    const b = parse(bodies.amend, req.body);
    const { event, contract } = await s.amendDelegation(p(req, 'id'), b.terms, b.reason, by);
    return { event, contract_revision: contract.revision_id };
  });
  route('post', '/admin/delegations/:id/reassign', async (req, by) => {
    const b = parse(bodies.reassign, req.body);
    const r = await s.reassign(p(req, 'id'), { to: b.to, reason: b.reason, ...(b.checkpoint ? { checkpoint: b.checkpoint } : {}), ...(b.resolvePrevious ? { resolvePrevious: b.resolvePrevious } : {}) }, by);
    return { checkpoint: r.checkpoint, revoked: r.revoked, reassigned: r.reassigned, contract_revision: r.contract.revision_id, attempt: r.attempt.record_id, state: r.attempt.body.state };
  });
  route('post', '/admin/cards/:id/lifecycle', (req, by) => {
    const b = parse(bodies.card, req.body);
    return s.setCardLifecycle(p(req, 'id'), b.lifecycle, b.reason, by);
  });
  const kindOf = (req: Request) => parse(ScopeKind, p(req, 'kind'));
  route('post', '/admin/breakers/:kind/:id/trip', (req, by) => {
    const b = parse(bodies.trip, req.body);
    return s.tripBreaker(kindOf(req), p(req, 'id'), b.trigger, b.reason, by);
  });
  route('post', '/admin/breakers/:kind/:id/reset', (req, by) => s.resetBreaker(kindOf(req), p(req, 'id'), parse(bodies.reason, req.body).reason, by));
  route('get', '/admin/escalations', (req) => s.escalationList(req.query.state === 'open' || req.query.state === 'acknowledged' ? req.query.state : undefined, limitOf(req, 100)));
  route('post', '/admin/escalations/:id/acknowledge', (req, by) => s.acknowledge(p(req, 'id'), parse(bodies.ack, req.body).note, by));
  route('get', '/admin/push/deliveries', async (req) => {
    const status = req.query.status === undefined ? undefined : parse(queries.deliveries.shape.status.unwrap(), req.query.status);
    const rows = await s.deliveries({ limit: limitOf(req, 100), ...(status ? { status } : {}), ...(typeof req.query.task === 'string' ? { task_id: req.query.task } : {}) });
    return rows.map(({ body: _b, ...rest }) => rest);
  });
  route('post', '/admin/push/deliveries/:id/requeue', async (req) => {
    parse(bodies.empty, req.body);
    await s.requeue(p(req, 'id'));
    return { requeued: p(req, 'id') };
  });
  route('get', '/admin/approvals', (req) => {
    const state = req.query.state === undefined ? undefined : queries.approvals.shape.state.unwrap().safeParse(req.query.state).data;
    return s.listApprovals({ limit: limitOf(req, 100), ...(state ? { state } : {}) });
  });
  route('get', '/admin/approvals/:id', (req) => s.showApproval(p(req, 'id')));
  route('post', '/admin/approvals/:id/approve', (req, by) => {
    const b = parse(bodies.approval, req.body);
    return s.approve(p(req, 'id'), b.previewDigest, b.note, by);
  });
  route('post', '/admin/approvals/:id/deny', (req, by) => {
    const b = parse(bodies.approval, req.body);
    return s.deny(p(req, 'id'), b.previewDigest, b.note, by);
  });
  route('post', '/admin/approvals/:id/review', (req, by) => {
    const b = parse(bodies.review, req.body);
    return s.review(p(req, 'id'), b.decision, b.note, by);
  });
  route('post', '/admin/audit/verify', () => s.auditVerify());
  const live = (): LiveConfig => {
    if (!deps.live) throw unsupported('this operator API cannot reload the gateway');
    return deps.live;
  };
  route('post', '/admin/reload', async (req) => {
    parse(bodies.empty, req.body);
    const report = await live().reload();
    // A refused configuration is the operator's to fix: invalid_request, with every problem (path, message, hint).
    if (!report.applied) throw invalidRequest('configuration refused; the running one stays', { source: report.source, problems: report.problems });
    return report;
  });
  route('post', '/admin/retention/purge', async (req, by) => s.purgeContent(new Date(parse(bodies.purge, req.body).before), by));
  route('post', '/admin/cards/refresh', async (req) => {
    const b = parse(bodies.refresh, req.body);
    return { cards: await live().refreshCards(b.delegatee) };
  });
  router.use((_req: Request, res: Response) => void sendHttpError(res, noSuchRoute('no such operator route')));
  return router;
}
