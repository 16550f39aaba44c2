/**
 * The approvals queue as operators use it (API, CLI, console): list, show
 * the exact effect preview, approve or deny, and T4's post-effect review.
 * Decisions are AuthorityDecision records (src/gates); an approval is
 * forwarded at once through the request path (admit → forward → follow →
 * verify) and a refusal there is reported with its ADR-0014 code.
 */
import { BatonError, isBatonError, unsupported } from '../errors.ts';
import type { HumanGates } from '../gates/approvals.ts';
import type { ApprovalRequest, AuthorityDecision } from '../gates/records.ts';
import type { RequestState } from '../gates/rules.ts';
import type { Dispatcher } from '../gateway/dispatcher.ts';
import { presentRequest } from '../gateway/path/gate.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import type { Clock } from '../records/time.ts';

/** One row of the queue. */
export interface ApprovalSummary {
  task_id: string;
  state: RequestState;
  tier: string;
  caller_id: string;
  delegatee_id: string;
  requested_at: string;
  expires_at: string;
  preview_digest: string;
  /** The first line of the readable rendering. */
  summary: string;
}

export interface ApprovalDetail extends ApprovalSummary {
  preview: ApprovalRequest['body']['preview'];
  request: { record_id: string; revision_id: string; content_digest: string };
  decision?: AuthorityDecision;
  refusal?: ApprovalRequest['body']['refusal'];
  /** The task as its caller sees it now. */
  task: unknown;
}

export interface ApprovalOutcome {
  decision: AuthorityDecision;
  request: ApprovalSummary;
  /** Approve only: the admitted attempt, or the ADR-0014 refusal (nothing was forwarded). */
  admission?: { attempt_id: string; state: string } | { error: { code: string; message: string; details: Record<string, unknown> } };
}

/** The operator id behind an operator's actor ref (src/operator/identity.ts). */
export function operatorIdOf(by: ActorRef): string {
  return by.object_id.replace(/^actor_operator_/, '');
}

export class ApprovalDesk {
  constructor(private readonly deps: { gates?: HumanGates; dispatcher: Dispatcher; clock: Clock }) {}

  private get gates(): HumanGates {
    if (!this.deps.gates) throw unsupported('no approvals are configured (see `approvals` in the configuration)');
    return this.deps.gates;
  }

  /** By the state shown: a pending request past its expiry is listed as expired (it is never revised for that). */
  async list(opts: { state?: RequestState; limit?: number } = {}): Promise<ApprovalSummary[]> {
    const stored = opts.state === 'pending' || opts.state === 'expired' ? 'pending' : opts.state;
    const rows = (await this.gates.list({ ...{}, ...(stored ? { state: stored } : {}), ...(opts.limit ? { limit: opts.limit } : {}) })).map((r) => this.summary(r));
    return opts.state ? rows.filter((r) => r.state === opts.state) : rows;
  }

  async show(taskId: string): Promise<ApprovalDetail> {
    const r = await this.gates.byTask(taskId);
    if (!r) throw new BatonError('invalid_request', 'no such approval request', { task: taskId.slice(0, 128) });
    const decision = await this.gates.decision(r.body.decision_ref);
    const attempt = r.body.state === 'admitted' ? await this.deps.dispatcher.deps.attempts.get(taskId) : undefined;
    return {
      ...{}, ...this.summary(r),
      preview: r.body.preview,
      request: { record_id: r.record_id, revision_id: r.revision_id, content_digest: r.content_digest },
      ...(decision ? { decision } : {}),
      ...(r.body.refusal ? { refusal: r.body.refusal } : {}),
      task: attempt ? await this.deps.dispatcher.getTask({ id: r.body.caller_id }, taskId) : presentRequest(r.body, this.deps.clock.now()),
    };
  }

  /** Approves the exact preview `previewDigest`, then admits and forwards the effect. */
  async approve(taskId: string, previewDigest: string, note: string, by: ActorRef, opts: { forward?: boolean } = {}): Promise<ApprovalOutcome> {
    const { request, decision } = await this.gates.decide(taskId, 'approve', previewDigest, note, { operator_id: operatorIdOf(by), actor_ref: by });
    // The CLI only records: the serving gateway's sweep forwards it (a CLI process is no place to follow a task).
    if (opts.forward === false) return { decision, request: this.summary(request) };
    let admission: ApprovalOutcome['admission'];
    try {
      const attempt = await this.deps.dispatcher.resumeApproved(taskId);
      admission = { attempt_id: attempt.record_id, state: attempt.body.state };
    } catch (err) {
      if (!isBatonError(err)) throw err;
      // A sweep (this node's or another's) may admit the approved request between the decision above and this
      // admission; that admission is this approval's, so the approver is answered with it, not with "already used".
      const admitted = err.details.rule === 'approval_used' ? await this.deps.dispatcher.deps.attempts.get(taskId) : undefined;
      admission = admitted ? { attempt_id: admitted.record_id, state: admitted.body.state } : { error: err.toJSON() as { code: string; message: string; details: Record<string, unknown> } };
    }
    const latest = (await this.gates.byTask(taskId)) ?? request;
    return { decision, request: this.summary(latest), admission };
  }

  /** Denies: the task ends REJECTED, nothing was forwarded and no budget was ever held for it. */
  async deny(taskId: string, previewDigest: string, note: string, by: ActorRef): Promise<ApprovalOutcome> {
    const { request, decision } = await this.gates.decide(taskId, 'deny', previewDigest, note, { operator_id: operatorIdOf(by), actor_ref: by });
    await this.deps.dispatcher.deps.push?.notifyTask?.(taskId, request.revision_id, presentRequest(request.body, this.deps.clock.now()));
    return { decision, request: this.summary(request) };
  }

  /** T4: the independent reviewer's decision on a verified effect. */
  async review(taskId: string, decision: 'approve' | 'deny', note: string, by: ActorRef): Promise<{ task_id: string; outcome: string | null; review: unknown }> {
    const a = await this.deps.dispatcher.review(taskId, decision, note, { operator_id: operatorIdOf(by), actor_ref: by });
    return { task_id: a.record_id, outcome: a.body.outcome ?? null, review: a.body.review ?? null };
  }

  private summary(r: ApprovalRequest): ApprovalSummary {
    const expired = r.body.state === 'pending' && this.deps.clock.now().getTime() >= Date.parse(r.body.expires_at);
    return {
      task_id: r.body.task_id,
      state: expired ? 'expired' : r.body.state,
      tier: r.body.tier,
      caller_id: r.body.caller_id,
      delegatee_id: r.body.delegatee_id,
      requested_at: r.body.requested_at,
      expires_at: r.body.expires_at,
      preview_digest: r.body.preview_digest,
      summary: ((r.body.preview.rendering ?? '').split('\n')[0] ?? '').slice(0, 200),
    };
  }
}
