/**
 * The console's actions: each one OperatorService call — the same the API
 * and CLI make — with the signed-in operator as actor; the router wraps each
 * in the session, CSRF and origin checks and answers 303 back to its page.
 */
import type { Request } from 'express';
import { invalidRequest } from '../errors.ts';
import { ScopeKind } from '../operator/route-docs.ts';
import type { BreakerTrigger, OperatorService } from '../operator/service.ts';
import type { ActorRef } from '../records/revision-ref.ts';

/** Registers a POST route: `run` returns the key of the notice shown on `back`. */
export type Act = (path: string, back: (req: Request) => string, run: (req: Request, by: ActorRef) => Promise<string>) => void;

/** The notice each action leaves on the page it returns to (fixed texts: nothing from the request is reflected). */
export const DONE: Record<string, string> = {
  revoke: 'Delegation revoked.',
  suspend: 'Delegation suspended.',
  resume: 'Delegation resumed.',
  acknowledged: 'Escalation acknowledged.',
  tripped: 'Breaker tripped.',
  reset: 'Breaker reset.',
  requeued: 'Delivery requeued.',
  approved: 'Approved: the exact previewed message was admitted and forwarded.',
  approved_refused: 'Approved, but the admission refused it (see below): nothing was forwarded.',
  denied: 'Denied: the task ends rejected; nothing was forwarded.',
  reviewed: 'Review recorded.',
};

export function consoleActions(act: Act, s: OperatorService): void {
  const field = (req: Request, name: string, max = 2048) => {
    const v = (req.body as Record<string, unknown> | undefined)?.[name];
    if (typeof v !== 'string' || v.length > max) throw invalidRequest(`form field ${name} is missing or too long`);
    return v;
  };
  const reason = (req: Request) => {
    const v = field(req, 'reason').trim();
    if (!v) throw invalidRequest('a reason is required');
    return v;
  };
  for (const action of ['revoke', 'suspend', 'resume'] as const) {
    act(`/delegations/:id/${action}`, (req) => `/console/delegations/${encodeURIComponent(String(req.params.id))}`, async (req, by) => {
      const id = String(req.params.id);
      // The typed confirmation: the operator names what they are about to stop.
      if (field(req, 'confirm').trim() !== id) throw invalidRequest('the confirmation does not match the delegation id');
      if (action === 'revoke') await s.revokeDelegation(id, reason(req), by);
      else await s.setDelegationLifecycle(id, action === 'suspend' ? 'suspended' : 'active', reason(req), by);
      return action;
    });
  }
  act('/escalations/:id/acknowledge', () => '/console/escalations', async (req, by) => {
    await s.acknowledge(String(req.params.id), field(req, 'note').trim() || 'acknowledged in the console', by);
    return 'acknowledged';
  });
  const scopeKind = (req: Request) => {
    const k = ScopeKind.safeParse(field(req, 'kind', 32));
    if (!k.success) throw invalidRequest('unknown scope kind');
    return k.data;
  };
  act('/breakers/trip', () => '/console/breakers', async (req, by) => {
    await s.tripBreaker(scopeKind(req), field(req, 'id', 2048).trim(), field(req, 'trigger', 64) as BreakerTrigger, reason(req), by);
    return 'tripped';
  });
  act('/breakers/reset', () => '/console/breakers', async (req, by) => {
    await s.resetBreaker(scopeKind(req), field(req, 'id', 2048).trim(), reason(req), by);
    return 'reset';
  });
  act('/push/deliveries/:id/requeue', () => '/console/push', async (req) => {
    await s.requeue(String(req.params.id));
    return 'requeued';
  });
  // The approver decides on the preview the page showed: its digest rides in the form and must still match.
  const approval = (req: Request) => `/console/approvals/${encodeURIComponent(String(req.params.id))}`;
  act('/approvals/:id/approve', approval, async (req, by) => {
    const out = await s.approve(String(req.params.id), field(req, 'preview_digest', 128), field(req, 'note').trim(), by);
    // The decision stands either way; a refusal at admission shows on the request's page.
    return out.admission && 'error' in out.admission ? 'approved_refused' : 'approved';
  });
  act('/approvals/:id/deny', approval, async (req, by) => {
    await s.deny(String(req.params.id), field(req, 'preview_digest', 128), field(req, 'note').trim(), by);
    return 'denied';
  });
  act('/approvals/:id/review', approval, async (req, by) => {
    const decision = field(req, 'decision', 16);
    if (decision !== 'approve' && decision !== 'deny') throw invalidRequest('a review decision is approve or deny');
    await s.review(String(req.params.id), decision, field(req, 'note').trim(), by);
    return 'reviewed';
  });
}
