/**
 * Step 3½: the human gate (RW-003 §6 T3/T4, ADR-0014 "a trusted interaction
 * with a person authorized to grant the requested scope"). Runs after
 * bindAuthority, before admit. An effect that needs a named human authority
 * is validated and recorded with its exact preview — nothing is admitted or
 * forwarded — and the caller holds a Baton task in TASK_STATE_AUTH_REQUIRED
 * (A2A §7.6.4: a coordination signal, not a grant). No prompt is started and
 * the preset's authority never stands in for the approval.
 *
 * Once approved, `admitApproved` rebuilds the effect from the recorded
 * request and runs the ordinary admit step with the approval bound; the
 * dispatcher then forwards, follows and verifies it like any other turn.
 */
import { TaskNotCancelableError } from '@a2a-js/sdk/errors';
import { BatonError, isBatonError, isConflict } from '../../errors.ts';
import { TaskNotFound } from '../task-not-found.ts';
import type { HumanGates } from '../../gates/approvals.ts';
import { refusalError } from '../../gates/approvals.ts';
import { previewDigest, renderParts, type EffectPreview } from '../../gates/preview.ts';
import type { GatedTier } from '../../gates/policy.ts';
import type { ApprovalRequest, ApprovalRequestBody } from '../../gates/records.ts';
import { admissionRefusal, type Refusal } from '../../gates/rules.ts';
import type { DelegationContract } from '../../contracts/model.ts';
import type { ControlBoundaryRef } from '../../control/fence.ts';
import { digestOf } from '../../records/digest.ts';
import { refOf } from '../../records/envelope.ts';
import type { JsonValue } from '../../records/strict-json.ts';
import { utc } from '../../records/time.ts';
import type { PreparedAuthority } from '../authority.ts';
import type { Caller } from '../callers.ts';
import type { ResolvedDelegatee } from '../delegatees.ts';
import { inputMessage } from '../task-input.ts';
import { admitFirstTurn, type AdmittedTurn } from './admit.ts';
import { bindAuthority } from './bind-authority.ts';
import type { PathDeps } from './deps.ts';
import { resolveTarget } from './resolve-target.ts';
import type { Json } from './turn.ts';
import type { ValidSend } from './validate.ts';

/** Where a gated task says what it waits for (beside Baton's outcome metadata). */
export const APPROVAL_METADATA = 'urn:baton:approval:v1';

/** The tier this first turn must clear, if any. */
export function gateTier(deps: Pick<PathDeps, 'gates'>, caller: Pick<Caller, 'preset'>, delegateeId: string): GatedTier | undefined {
  return deps.gates?.tierFor({ delegatee: delegateeId, ...(caller.preset ? { preset: caller.preset } : {}) });
}

/**
 * Holds a first turn that needs approval: verifies the authority it would
 * run under (a request that could never be admitted is refused now, not
 * parked), records the request with its preview and the authority heads
 * seen now, registers the integrator's webhook and tells it. Returns the
 * task the caller gets.
 */
export async function holdForApproval(deps: PathDeps, gates: HumanGates, tier: GatedTier, caller: Caller, resolved: ResolvedDelegatee, bound: PreparedAuthority, req: ValidSend, operation: string): Promise<Json> {
  const chain = await bound.reevaluate(deps.authority.operation(operation, 'proposal'));
  const taskId = deps.ids.next('att');
  const expires = utc(new Date(deps.clock.now().getTime() + gates.deps.config.pendingSeconds * 1000));
  const preview = previewOf({ tier, operation, caller, resolved, leaf: chain.leaf, message: req.message, expiresAt: expires });
  const fence = await deps.store.control.fenceSet(chain.fenceScopes);
  const { taskPushNotificationConfig: push, ...configuration } = (req.params.configuration as Json | undefined | null) ?? {};
  const contextId = typeof req.message.contextId === 'string' ? req.message.contextId : deps.ids.next('ctx');
  const request = await gates.open({
    task_id: taskId,
    context_id: contextId,
    caller_id: caller.id,
    delegatee_id: resolved.config.id,
    tier,
    operation,
    // The integrator's webhook credentials go to the sealed push registry, never into this record.
    params: { ...{}, ...req.params, configuration } as Record<string, unknown>,
    preview,
    preview_digest: previewDigest(preview),
    fence_set: fence as unknown as Array<Record<string, unknown>>,
  });
  const task = presentRequest(request.body, deps.clock.now());
  if (push !== undefined && push !== null && deps.push) {
    await deps.push.register(caller, { record_id: taskId, body: { state: 'open' } } as never, push);
    await deps.push.notifyTask?.(taskId, request.revision_id, task);
  }
  return task;
}

/** The exact effect preview (src/gates/preview.ts) of a message to a delegatee under a child contract. */
export function previewOf(i: { tier: GatedTier; operation: string; caller: Pick<Caller, 'id'>; resolved: ResolvedDelegatee; leaf: DelegationContract; message: Json; expiresAt: string }): EffectPreview {
  return {
    tier: i.tier,
    operation: i.operation,
    caller_id: i.caller.id,
    delegatee: { id: i.resolved.config.id, card_object_id: i.resolved.option.card_ref.object_id, card_digest: i.resolved.verification.payload_digest },
    message_digest: digestOf(inputMessage(i.message)),
    rendering: renderParts(i.message),
    scope: i.leaf.body.scope as unknown as JsonValue,
    budget: i.leaf.body.budget_ceilings as unknown as JsonValue,
    expires_at: i.expiresAt,
  };
}

/**
 * Admits an approved effect: the recorded message, the delegatee's card as
 * it is now, authority issued now from the caller's preset — and the preview
 * rebuilt from them must have the approved digest. The admission fences on
 * the approved heads and commits the request's `admitted` revision, so a
 * moved head or a second use refuses it in the same transaction. A refusal
 * is recorded on the request (nothing was forwarded) and thrown with its
 * ADR-0014 code.
 */
export async function admitApproved(deps: PathDeps, gates: HumanGates, taskId: string): Promise<{ turn: AdmittedTurn; params: Json }> {
  const request = await gates.byTask(taskId);
  if (!request) throw new BatonError('invalid_request', 'no such approval request', { task: taskId.slice(0, 128) });
  const decision = await gates.decision(request.body.decision_ref);
  const caller = gates.deps.callerOf(request.body.caller_id);
  const params = request.body.params as Json;
  const message = params.message as Json;
  const fail = async (r: Refusal): Promise<never> => {
    if (request.body.state === 'approved') await gates.refuse(request, r).catch(() => undefined);
    throw refusalError(r, { task: taskId });
  };
  if (!caller) return fail({ code: 'deny', rule: 'caller_removed', reason: 'the requesting caller is no longer configured' });
  let resolved: ResolvedDelegatee;
  let bound: PreparedAuthority;
  let chain: Awaited<ReturnType<PreparedAuthority['reevaluate']>>;
  try {
    resolved = await resolveTarget(deps, request.body.delegatee_id);
    bound = await bindAuthority(deps, caller, resolved, message);
    chain = await bound.reevaluate(deps.authority.operation(request.body.operation, 'proposal'));
  } catch (err) {
    // A transient failure leaves the approval usable until it expires (the gateway's sweep tries again).
    if (isBatonError(err) && !TRANSIENT.has(err.code)) return fail({ code: err.code, rule: 'authority', reason: err.message });
    throw err;
  }
  const current = previewOf({ tier: request.body.tier, operation: request.body.operation, caller, resolved, leaf: chain.leaf, message, expiresAt: request.body.preview.expires_at });
  const refusal = admissionRefusal({ state: request.body.state, decision: decision?.body, requestDigest: request.body.preview_digest, currentDigest: previewDigest(current), now: deps.clock.now() });
  if (refusal) return refusal.rule === 'approval_used' || refusal.rule === 'awaiting_approval' ? Promise.reject(refusalError(refusal, { task: taskId })) : fail(refusal);
  const admitted = gates.nextRevision(request, { state: 'admitted', attempt_id: taskId });
  try {
    const turn = await admitFirstTurn(deps, {
      caller: { id: caller.id },
      target: resolved,
      authority: bound,
      message,
      operation: request.body.operation,
      approved: {
        attemptId: taskId,
        contextId: request.body.context_id,
        pinnedFence: request.body.fence_set as unknown as ControlBoundaryRef[],
        approval: { decision_ref: refOf(decision!), request_ref: refOf(admitted), tier: request.body.tier },
        records: [admitted as never],
      },
    });
    return { turn, params };
  } catch (err) {
    // The request's head moved under us: another node admitted it first (a second use).
    if (isConflict(err, 'head_moved')) throw refusalError({ code: 'context_invalidated', rule: 'approval_used', reason: 'this approval was already used' }, { task: taskId });
    if (isBatonError(err) && !TRANSIENT.has(err.code)) return fail({ code: err.code, rule: err.code === 'context_invalidated' ? 'fence_moved' : 'admission', reason: err.message });
    throw err;
  }
}

/** A task held at the gate, as its caller sees it (another caller's is not found: A2A TaskNotFound). */
export async function heldTask(deps: Pick<PathDeps, 'gates' | 'clock'>, caller: Pick<Caller, 'id'>, taskId: string): Promise<Json> {
  const request = await deps.gates?.byTask(taskId);
  if (!request || request.body.caller_id !== caller.id) throw new TaskNotFound(taskId);
  return presentRequest(request.body, deps.clock.now());
}

/** The caller's tasks still held at the gate (not yet admitted), newest first; a bounded scan. */
export async function heldTasks(deps: Pick<PathDeps, 'gates' | 'clock'>, caller: Pick<Caller, 'id'>, delegateeId: string | undefined, contextId: string | undefined): Promise<Json[]> {
  if (!deps.gates) return [];
  return (await deps.gates.list({ limit: 100 }))
    .map((r) => r.body)
    .filter((b) => b.state !== 'admitted' && b.caller_id === caller.id && (delegateeId === undefined || b.delegatee_id === delegateeId) && (!contextId || b.context_id === contextId))
    .map((b) => presentRequest(b, deps.clock.now()));
}

/** CancelTask on a task still held at the gate: withdrawn; nothing was or will be forwarded. */
export async function withdrawHeld(deps: Pick<PathDeps, 'gates' | 'clock' | 'push'>, caller: Pick<Caller, 'id'>, taskId: string): Promise<Json> {
  const request = await deps.gates?.byTask(taskId);
  if (!request || request.body.caller_id !== caller.id) throw new TaskNotFound(taskId);
  if (request.body.state !== 'pending') throw new TaskNotCancelableError('the request was already decided');
  const next = await deps.gates!.revise(request, { state: 'withdrawn' });
  const task = presentRequest(next.body, deps.clock.now());
  await deps.push?.notifyTask?.(taskId, next.revision_id, task);
  return task;
}

// Worth another try while the approval lasts: an unreachable card or store, a preset's rate or capacity limit.
const TRANSIENT = new Set(['unavailable', 'storage_error', 'limit_exceeded']);

const STATE_OF: Record<ApprovalRequestBody['state'], string> = {
  pending: 'TASK_STATE_AUTH_REQUIRED',
  approved: 'TASK_STATE_SUBMITTED',
  admitted: 'TASK_STATE_SUBMITTED',
  denied: 'TASK_STATE_REJECTED',
  refused: 'TASK_STATE_REJECTED',
  expired: 'TASK_STATE_REJECTED',
  withdrawn: 'TASK_STATE_CANCELED',
};

/** What the caller sees of a task held at the gate (Baton's ids only; nothing of it reached the delegatee). */
export function presentRequest(r: ApprovalRequestBody, now: Date): Json {
  const expired = r.state === 'pending' && now.getTime() >= Date.parse(r.expires_at);
  const state = expired ? 'expired' : r.state;
  const text = statusText(r, state);
  return {
    id: r.task_id,
    contextId: r.context_id,
    status: {
      state: STATE_OF[state],
      message: { messageId: `${r.task_id}-gate-${state}`, role: 'ROLE_AGENT', taskId: r.task_id, contextId: r.context_id, parts: [{ text }] },
    },
    artifacts: [],
    history: [{ ...{}, ...(inputMessage((r.params as Json).message as Json) as Json), taskId: r.task_id, contextId: r.context_id }],
    metadata: {
      [APPROVAL_METADATA]: {
        state,
        tier: r.tier,
        previewDigest: r.preview_digest,
        expiresAt: r.expires_at,
        ...(r.refusal ? { code: r.refusal.code, rule: r.refusal.rule } : {}),
      },
    },
  };
}

function statusText(r: ApprovalRequestBody, state: ApprovalRequestBody['state']): string {
  switch (state) {
    case 'pending':
      return `Waiting for a named human authority to approve this exact effect (${r.tier}, preview ${r.preview_digest}) before anything is sent to ${r.delegatee_id}; the request expires at ${r.expires_at}. This is not a grant: nothing was forwarded.`;
    case 'approved':
    case 'admitted':
      return 'Approved by a named human authority; being admitted and forwarded.';
    case 'denied':
      return 'A named human authority denied this effect; nothing was forwarded.';
    case 'refused':
      return `The approved effect was not admitted (${r.refusal?.code ?? 'deny'}: ${r.refusal?.reason ?? 'refused'}); nothing was forwarded.`;
    case 'expired':
      return 'No decision was made before the request expired; nothing was forwarded.';
    case 'withdrawn':
      return 'The caller withdrew the request; nothing was forwarded.';
  }
}

export type { ApprovalRequest };
