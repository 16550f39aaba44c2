/**
 * The upstream's federation endpoints (issue #16). Only an authenticated
 * caller configured as a downstream gateway may read head statements, and
 * only for delegations issued to that gateway's actor.
 */
import express, { Router } from 'express';
import { BatonError, deny, invalidRequest } from '../errors.ts';
import type { CallerAuthenticator } from '../gateway/callers.ts';
import type { Federation } from './federation.ts';

export const HEADS_PATH = '/federation/v1/heads';
export const NOTIFY_PATH = '/federation/v1/notify';

export function federationRouter(deps: { federation: Federation; auth: CallerAuthenticator }): Router {
  const r = Router();
  r.get(`${HEADS_PATH}/:delegationId`, async (req, res) => {
    const caller = await deps.auth.authenticate(req.headers);
    if (!caller) throw new BatonError('authentication_required', 'credentials are required');
    if (!caller.downstream) throw deny('this caller is not a downstream gateway');
    const jws = await deps.federation.statementFor(caller.downstream.actorObjectId, req.params.delegationId);
    res.set('cache-control', 'no-store').type('application/jose').send(jws);
  });
  // A control notice authenticates by its signature under the upstream's pinned keys (nothing else is trusted).
  r.post(NOTIFY_PATH, express.text({ type: 'application/jose', limit: '128kb' }), async (req, res) => {
    if (typeof req.body !== 'string' || req.body.length === 0) throw invalidRequest('a control notice is a compact JWS');
    const tripped = await deps.federation.receiveNotice(req.body.trim());
    res.json({ accepted: true, tripped });
  });
  return r;
}
