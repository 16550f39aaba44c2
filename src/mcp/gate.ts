/**
 * The human gate for MCP calls (RW-003 §6 T3/T4; issue #26: "gated tools
 * produce an approval request with the exact preview exactly as A2A sends
 * do"). A gated `tools/call` is recorded with its preview — tool, arguments
 * digest and rendering, the child's scope and budget — and refused with
 * `interaction_required` naming the request; nothing is admitted or sent.
 * Once a named human approves, any node (the approval action or the sweep)
 * admits the call with the approval bound and runs it; the client, calling
 * again with the request's id under `_meta["urn:baton:approval:v1"]`, gets
 * its outcome. An approval is used once, for that exact call.
 */
import { BatonError, isConflict } from '../errors.ts';
import type { HumanGates } from '../gates/approvals.ts';
import { refusalError } from '../gates/approvals.ts';
import { previewDigest, visibleJson, type EffectPreview } from '../gates/preview.ts';
import type { GatedTier } from '../gates/policy.ts';
import type { ApprovalRequest } from '../gates/records.ts';
import { admissionRefusal, type Refusal } from '../gates/rules.ts';
import type { DelegationContract } from '../contracts/model.ts';
import { MCP_CALL } from '../contracts/machine-preset.ts';
import type { ControlBoundaryRef } from '../control/fence.ts';
import type { ApprovedEffect } from '../gateway/path/admit.ts';
import type { PathDeps } from '../gateway/path/deps.ts';
import { digestOf } from '../records/digest.ts';
import { refOf } from '../records/envelope.ts';
import type { JsonValue } from '../records/strict-json.ts';
import { utc } from '../records/time.ts';

type Json = { [k: string]: JsonValue };

/** Where a client names the approved request it calls under (beside Baton's outcome metadata). */
export const APPROVAL_META = 'urn:baton:approval:v1';

/** The approval request a call names, if any: `_meta["urn:baton:approval:v1"].task`. */
export function approvalNamed(meta: unknown): string | undefined {
  const m = meta && typeof meta === 'object' ? (meta as Record<string, unknown>)[APPROVAL_META] : undefined;
  const task = m && typeof m === 'object' ? (m as { task?: unknown }).task : undefined;
  return typeof task === 'string' && /^att_[A-Za-z0-9_-]{1,128}$/.test(task) ? task : undefined;
}

/** The exact effect an approver decides on: this tool, these arguments, under this child contract. */
export function callPreview(i: { tier: GatedTier; callerId: string; server: string; card: { object_id: string; content_digest: string }; leaf: DelegationContract; message: Json; expiresAt: string }): EffectPreview {
  return {
    tier: i.tier,
    operation: MCP_CALL,
    caller_id: i.callerId,
    delegatee: { id: i.server, card_object_id: i.card.object_id, card_digest: i.card.content_digest },
    message_digest: digestOf(i.message),
    // Canonical JSON with invisible characters escaped: what is shown is exactly what is sent (gates/preview.ts).
    rendering: `tool ${visibleJson(i.message.tool)}\narguments ${visibleJson(i.message.arguments)}`,
    scope: i.leaf.body.scope as unknown as JsonValue,
    budget: i.leaf.body.budget_ceilings as unknown as JsonValue,
    expires_at: i.expiresAt,
  };
}

/** Records a gated call with its preview and the heads seen now; throws `interaction_required` naming the request. */
export async function holdCall(deps: PathDeps, gates: HumanGates, i: { tier: GatedTier; callerId: string; server: string; card: { object_id: string; content_digest: string }; leaf: DelegationContract; fenceScopes: readonly unknown[]; message: Json }): Promise<never> {
  const taskId = deps.ids.next('att');
  const expiresAt = utc(new Date(deps.clock.now().getTime() + gates.deps.config.pendingSeconds * 1000));
  const preview = callPreview({ ...{}, ...i, expiresAt });
  const fence = await deps.store.control.fenceSet(i.fenceScopes as never);
  const request = await gates.open({
    task_id: taskId,
    context_id: deps.ids.next('ctx'),
    caller_id: i.callerId,
    delegatee_id: i.server,
    tier: i.tier,
    operation: MCP_CALL,
    params: { message: i.message },
    preview,
    preview_digest: previewDigest(preview),
    fence_set: fence as unknown as Array<Record<string, unknown>>,
  });
  throw new BatonError('interaction_required', 'this tool call needs a named human approval of its exact preview; call again naming the request once it is approved', {
    [APPROVAL_META]: { task: taskId, tier: i.tier, preview_digest: request.body.preview_digest, expires_at: request.body.expires_at },
  });
}

/**
 * The approval an admission binds (path/admit.ts ApprovedEffect), once the
 * rules allow it (gates/rules.ts admissionRefusal): the current preview must
 * have the approved digest, and the request's `admitted` revision commits in
 * the admission transaction, so a second use conflicts there.
 */
export async function approvedEffect(gates: HumanGates, request: ApprovalRequest, current: EffectPreview, now: Date): Promise<ApprovedEffect> {
  const decision = await gates.decision(request.body.decision_ref);
  const refusal = admissionRefusal({ state: request.body.state, decision: decision?.body, requestDigest: request.body.preview_digest, currentDigest: previewDigest(current), now });
  if (refusal) {
    // A definite refusal is recorded on the request (nothing was sent); waiting or a second use is only reported.
    if (request.body.state === 'approved' && !WAITING.has(refusal.rule)) await gates.refuse(request, refusal).catch(() => undefined);
    throw refusalError(refusal, { task: request.body.task_id });
  }
  const admitted = gates.nextRevision(request, { state: 'admitted', attempt_id: request.body.task_id });
  return {
    attemptId: request.body.task_id,
    contextId: request.body.context_id,
    pinnedFence: request.body.fence_set as unknown as ControlBoundaryRef[],
    approval: { decision_ref: refOf(decision!), request_ref: refOf(admitted), tier: request.body.tier },
    records: [admitted as never],
  };
}

const WAITING = new Set<Refusal['rule']>(['approval_used', 'awaiting_approval']);

/** A second use that lost the admission race surfaces as the rule it broke. */
export function asApprovalUse(err: unknown, taskId: string): unknown {
  return isConflict(err, 'head_moved') ? refusalError({ code: 'context_invalidated', rule: 'approval_used', reason: 'this approval was already used' }, { task: taskId }) : err;
}
