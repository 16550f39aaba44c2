/**
 * The human-gate decision rules (RW-003 §6, §1.1 "Review or human gate";
 * ADR-0014 error vocabulary). Pure: every input is passed in, so each rule
 * is tested alone. A refusal names its ADR-0014 code and the rule it broke.
 */
import type { ErrorCode } from '../errors.ts';
import type { Approver } from './policy.ts';

export interface Refusal {
  code: ErrorCode;
  rule: string;
  reason: string;
}

const refuse = (code: ErrorCode, rule: string, reason: string): Refusal => ({ code, rule, reason });

export type RequestState = 'pending' | 'approved' | 'denied' | 'admitted' | 'refused' | 'expired' | 'withdrawn';

/**
 * May `approver` decide this request now? RW-003 §1.1: "a same-principal
 * note cannot silently satisfy a gate whose policy requires a different
 * principal" — the caller's own principal never approves its own request.
 */
export function decisionRefusal(i: { state: RequestState; approver: Approver | undefined; callerPrincipal: string; seenDigest: string; previewDigest: string; now: Date; expiresAt: string }): Refusal | undefined {
  if (!i.approver) return refuse('deny', 'not_an_approver', 'this operator is not a configured approver');
  if (i.approver.principal === i.callerPrincipal) return refuse('deny', 'self_approval', 'the requesting principal cannot approve its own request');
  if (i.state !== 'pending') return refuse('invalid_request', 'not_pending', `the request is ${i.state}, not pending`);
  if (i.now.getTime() >= Date.parse(i.expiresAt)) return refuse('context_invalidated', 'request_expired', 'the request expired before a decision');
  if (i.seenDigest !== i.previewDigest) return refuse('context_invalidated', 'preview_mismatch', 'the preview decided on is not the request\'s exact preview');
  return undefined;
}

/**
 * May the approved effect be admitted now? The approval binds the exact
 * preview digest; a changed request, an expired approval or a second use is
 * refused (a moved fence is refused by the admission transaction itself).
 */
export function admissionRefusal(i: {
  state: RequestState;
  decision: { decision: 'approve' | 'deny'; preview_digest: string; expires_at: string } | undefined;
  requestDigest: string;
  currentDigest: string;
  now: Date;
}): Refusal | undefined {
  if (i.state === 'admitted') return refuse('context_invalidated', 'approval_used', 'this approval was already used');
  if (i.state === 'pending') return refuse('interaction_required', 'awaiting_approval', 'a named human authority has not approved this effect');
  if (i.state === 'denied') return refuse('deny', 'denied', 'the effect was denied');
  if (i.state !== 'approved') return refuse('context_invalidated', 'not_approved', `the request is ${i.state}`);
  if (!i.decision || i.decision.decision !== 'approve') return refuse('deny', 'no_approval', 'no approval is bound to this request');
  if (i.decision.preview_digest !== i.requestDigest) return refuse('context_invalidated', 'preview_mismatch', 'the approval names another preview');
  if (i.currentDigest !== i.decision.preview_digest) return refuse('context_invalidated', 'request_changed', 'the effect changed since it was approved');
  if (i.now.getTime() >= Date.parse(i.decision.expires_at)) return refuse('context_invalidated', 'approval_expired', 'the approval expired before admission');
  return undefined;
}

/**
 * T4 (RW-003 §6 "required review"): the post-effect reviewer is independent
 * of the caller and of the approver who let the effect through.
 */
export function reviewRefusal(i: { pending: boolean; reviewer: Approver | undefined; callerPrincipal: string; approverPrincipal: string | undefined }): Refusal | undefined {
  if (!i.reviewer || !i.reviewer.reviewer) return refuse('deny', 'not_a_reviewer', 'this operator is not a configured reviewer');
  if (i.reviewer.principal === i.callerPrincipal) return refuse('deny', 'self_review', 'the requesting principal cannot review its own effect');
  if (i.reviewer.principal === i.approverPrincipal) return refuse('deny', 'reviewer_not_independent', 'the approver cannot also be the reviewer');
  if (!i.pending) return refuse('invalid_request', 'no_review_pending', 'this task has no review pending');
  return undefined;
}

/** A request this gateway may decide, sweep and admit: its own, or one from before requests named their gateway. */
export function isOwnRequest(request: { gateway_id?: unknown }, gateway: string): boolean {
  return request.gateway_id === undefined || request.gateway_id === gateway;
}
