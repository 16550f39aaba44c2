/**
 * The human gate's durable side: approval requests and AuthorityDecision
 * records in the store (append-only revisions, so `baton audit verify`
 * re-checks every one), and the decision of an operator on a request.
 * Forwarding an approved effect is the request path's (src/gateway/path/gate.ts).
 */
import { BatonError, invalidRequest, isConflict } from '../errors.ts';
import type { Caller } from '../gateway/callers.ts';
import { ride } from '../records/detached.ts';
import { refOf, sealRecord, type Envelope, type SealedRecord } from '../records/envelope.ts';
import type { IdSource } from '../records/ids.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import { utc, type Clock } from '../records/time.ts';
import type { Store } from '../store/port.ts';
import { currentWhere } from '../store/scan.ts';
import { approversOf, callerPrincipal, requiredTier, type ApprovalsConfig, type Approver, type GatedTier } from './policy.ts';
import {
  ApprovalRequestBody,
  AuthorityDecisionBody,
  DECISION_SCHEMA,
  REQUEST_SCHEMA,
  requestIdOf,
  type ApprovalRequest,
  type AuthorityDecision,
} from './records.ts';
import { detachBody, hydrateBody } from './content.ts';
import type { EffectPreview } from './preview.ts';
import { decisionRefusal, isOwnRequest, type Refusal, type RequestState } from './rules.ts';

/** What the request path hands over when it holds an effect for approval. */
export interface OpenRequest {
  task_id: string;
  context_id: string;
  caller_id: string;
  delegatee_id: string;
  tier: GatedTier;
  operation: string;
  params: Record<string, unknown>;
  preview: EffectPreview;
  preview_digest: string;
  fence_set: Array<Record<string, unknown>>;
}

export interface GateDeps {
  store: Store;
  clock: Clock;
  ids: IdSource;
  gatewayActor: ActorRef;
  config: ApprovalsConfig;
  /** The configured caller a request was made by (an approved effect is admitted under the caller's preset, now). */
  callerOf: (callerId: string) => Caller | undefined;
  /** A delegatee's own `requireApproval`, if configured. */
  requireApprovalOf: (delegateeId: string) => true | GatedTier | undefined;
}

/** The operator acting, as the API, CLI or console authenticated it. */
export interface Acting {
  operator_id: string;
  actor_ref: ActorRef;
}

export function refusalError(r: Refusal, details: Record<string, unknown> = {}): BatonError {
  return new BatonError(r.code, r.reason, { rule: r.rule, ...details });
}

export class HumanGates {
  readonly approvers: readonly Approver[];

  constructor(readonly deps: GateDeps) {
    this.approvers = approversOf(deps.config);
  }

  tierFor(req: { delegatee: string; preset?: string }): GatedTier | undefined {
    const own = this.deps.requireApprovalOf(req.delegatee);
    return requiredTier(this.deps.config, { ...{}, ...req, ...(own !== undefined ? { requireApproval: own } : {}) });
  }

  principalOf(callerId: string): string {
    return callerPrincipal(this.deps.config, callerId);
  }

  approverOf(operatorId: string): Approver | undefined {
    return this.approvers.find((a) => a.operator === operatorId);
  }

  /**
   * Records a new pending request (nothing is forwarded; the caller holds its
   * task id). Only the message is kept to forward: it is what the preview
   * shows and its digest covers, so request-level `metadata` and
   * `configuration` are not forwarded for a gated effect (issue 25 item 18).
   * The message and its rendering are kept apart from the record (content.ts).
   */
  async open(body: OpenRequest): Promise<ApprovalRequest> {
    const now = this.deps.clock.now();
    const full = {
      ...{}, ...body,
      params: { message: body.params.message },
      caller_principal: this.principalOf(body.caller_id),
      requested_at: utc(now),
      expires_at: body.preview.expires_at,
      state: 'pending' as const,
      gateway_id: this.deps.gatewayActor.object_id,
    };
    const whole = ApprovalRequestBody.parse(full) as ApprovalRequestBody;
    const apart = detachBody(whole);
    const record = sealRecord<ApprovalRequestBody>(
      { type: 'approval_request', issuedBy: this.deps.gatewayActor, lifecycle: 'proposed', body: apart.body },
      { ids: { next: (p) => (p === 'rev' ? this.deps.ids.next('rev') : requestIdOf(body.task_id)) }, clock: this.deps.clock },
    );
    await this.deps.store.putRecord(ride(record, apart.content));
    return { ...{}, ...record, body: { ...{}, ...apart.body, params: whole.params, preview: whole.preview } };
  }

  /** The request behind a task id, read back through its schema; another gateway's is none of this one's (isOwnRequest). */
  async byTask(taskId: string): Promise<ApprovalRequest | undefined> {
    if (!/^att_/.test(taskId)) return undefined;
    return this.requestOf(await this.deps.store.getRecord(requestIdOf(taskId)));
  }

  /** A request record read back through its schema, made whole from the content store (content.ts). */
  private async requestOf(r: Envelope | undefined): Promise<ApprovalRequest | undefined> {
    if (!r || r.schema_ref !== REQUEST_SCHEMA || !this.own(r)) return undefined;
    return { ...{}, ...r, body: ApprovalRequestBody.parse(await hydrateBody(r.body as Record<string, unknown>, this.deps.store.content)) } as SealedRecord<ApprovalRequestBody>;
  }

  async decision(ref: { object_id: string; revision_id: string } | undefined): Promise<AuthorityDecision | undefined> {
    if (!ref) return undefined;
    const r = await this.deps.store.getRecord(ref.object_id, ref.revision_id);
    if (!r || r.schema_ref !== DECISION_SCHEMA) return undefined;
    return { ...{}, ...r, body: AuthorityDecisionBody.parse(r.body) } as AuthorityDecision;
  }

  /** This gateway's requests (isOwnRequest), newest first; a bounded scan. */
  list(opts: { state?: RequestState; limit?: number } = {}): Promise<ApprovalRequest[]> {
    const limit = Math.min(Math.max(opts.limit ?? 100, 1), 1000);
    const match = (r: Envelope) => this.own(r) && (!opts.state || (r.body as ApprovalRequestBody).state === opts.state);
    return currentWhere<ApprovalRequest & Envelope>(this.deps.store, REQUEST_SCHEMA, match, { limit, pages: 20, pageSize: 200 }).then((rs) =>
      Promise.all(rs.map(async (r) => (await this.requestOf(r))!)),
    );
  }

  /** Whether a request record is this gateway's (its body names it, or names none). */
  private own(r: Envelope): boolean {
    return isOwnRequest(r.body as { gateway_id?: unknown }, this.deps.gatewayActor.object_id);
  }

  /**
   * An operator's decision on the exact preview they saw (`seenDigest`).
   * The AuthorityDecision is immutable; the request's next revision names
   * it. Two approvers racing: the second revision finds the head moved and
   * is refused (`not_pending`); its decision record stays as history only.
   */
  async decide(taskId: string, decision: 'approve' | 'deny', seenDigest: string, note: string, by: Acting): Promise<{ request: ApprovalRequest; decision: AuthorityDecision }> {
    const request = await this.byTask(taskId);
    if (!request) throw invalidRequest('no such approval request', { task: taskId.slice(0, 128) });
    const approver = this.approverOf(by.operator_id);
    const now = this.deps.clock.now();
    const refusal = decisionRefusal({ state: request.body.state, approver, callerPrincipal: request.body.caller_principal, seenDigest, previewDigest: request.body.preview_digest, now, expiresAt: request.body.expires_at });
    if (refusal) throw refusalError(refusal, { task: taskId });
    const expires = Math.min(now.getTime() + this.deps.config.approvalSeconds * 1000, Date.parse(request.body.expires_at));
    const record = sealRecord<AuthorityDecisionBody>(
      {
        type: 'authority_decision',
        issuedBy: by.actor_ref,
        lifecycle: 'recorded',
        body: {
          kind: 'approval',
          decision,
          task_id: taskId,
          subject_ref: refOf(request),
          preview_digest: request.body.preview_digest,
          approver: { actor_ref: by.actor_ref, operator_id: by.operator_id, principal_id: approver!.principal, role: approver!.role },
          decided_at: utc(now),
          expires_at: utc(new Date(expires)),
          note: note.slice(0, 2048),
        },
      },
      this.deps,
    );
    await this.deps.store.putRecord(record);
    const next = await this.revise(request, { state: decision === 'approve' ? 'approved' : 'denied', decision_ref: refOf(record) }, by.actor_ref).catch((err) => {
      throw conflictAsNotPending(err);
    });
    return { request: next, decision: record };
  }

  /** The request's next revision (sealed, not stored): for the admission transaction to commit. Its content stays apart. */
  nextRevision(request: ApprovalRequest, patch: Partial<ApprovalRequestBody>, by: ActorRef = this.deps.gatewayActor): ApprovalRequest {
    const lifecycle = patch.state === 'approved' || patch.state === 'admitted' ? 'active' : patch.state === 'pending' ? 'proposed' : 'recorded';
    const apart = detachBody(ApprovalRequestBody.parse({ ...{}, ...request.body, ...patch }) as ApprovalRequestBody);
    const next = sealRecord<ApprovalRequestBody>({ type: 'approval_request', issuedBy: by, lifecycle, recordId: request.record_id, prior: refOf(request), body: apart.body }, this.deps);
    return ride(next, apart.content);
  }

  /** Stores the next revision; returns it whole (with the request's content, as read). */
  async revise(request: ApprovalRequest, patch: Partial<ApprovalRequestBody>, by?: ActorRef): Promise<ApprovalRequest> {
    const next = this.nextRevision(request, patch, by);
    await this.deps.store.putRecord(next);
    return { ...{}, ...next, body: { ...{}, ...next.body, params: request.body.params, preview: { ...{}, ...next.body.preview, rendering: request.body.preview.rendering } } } as ApprovalRequest;
  }

  /** Records why an approved effect was not admitted (ADR-0014 code); nothing was forwarded. */
  refuse(request: ApprovalRequest, r: Refusal): Promise<ApprovalRequest> {
    return this.revise(request, { state: 'refused', refusal: { ...{}, ...r, at: utc(this.deps.clock.now()) } });
  }
}

function conflictAsNotPending(err: unknown): unknown {
  if (isConflict(err, 'head_moved')) return new BatonError('invalid_request', 'the request was decided by someone else first', { rule: 'not_pending' });
  return err;
}
