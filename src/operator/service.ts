/**
 * Every operator action, once: the admin API, the CLI and the console all
 * call this facade. The work lives beside it, one concern a module: control
 * actions (control-actions.ts), reads (queries.ts), checkpoints
 * (checkpoints.ts), the §11.4 reassignment (reassignment.ts), approvals
 * (approvals.ts); escalations, deliveries, audit and retention are one-line
 * delegations here. Each action appends control events or records; nothing
 * is erased or rewritten. Stopping running work after a revocation,
 * suspension or breaker trip is the serving gateway's revocation sweep (it
 * sees the fences move within `revocationSweepMs`), so an action taken from
 * the CLI and one taken through the API have the same effect.
 */
import type { TreeQuery } from './tree-page.ts';
import { auditStore } from '../audit/scan.ts';
import type { DelegationContract } from '../contracts/model.ts';
import type { BreakerTrigger } from '../control/breaker.ts';
import type { ControlEvent } from '../control/event.ts';
import type { ScopeKind } from '../control/scope.ts';
import type { AttemptBody } from '../attempts/record.ts';
import { requeueRefused } from '../push/model.ts';
import { purgeContent } from '../retention/purge.ts';
import type { SealedRecord } from '../records/envelope.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import type { JsonValue } from '../records/strict-json.ts';
import type { DeliveryStatus } from '../store/port.ts';
import type { RequestState } from '../gates/rules.ts';
import { Checkpoints, type Checkpoint } from './checkpoints.ts';
import { ApprovalDesk, type ApprovalDetail, type ApprovalOutcome, type ApprovalSummary } from './approvals.ts';
import type { CARD_STATES } from './card-states.ts';
import { ControlActions } from './control-actions.ts';
import type { OperatorDeps } from './deps.ts';
import { Lineage } from './lineage.ts';
import { OperatorQueries } from './queries.ts';
import { Reassignment, type ReassignRequest, type Reassigned } from './reassignment.ts';

export type { Checkpoint } from './checkpoints.ts';
export type { ApprovalDetail, ApprovalOutcome, ApprovalSummary } from './approvals.ts';
export type { OperatorDeps } from './deps.ts';
export { CARD_STATES } from './card-states.ts';
export { BREAKER_TRIGGERS, type BreakerTrigger } from '../control/breaker.ts';

type Attempt = SealedRecord<AttemptBody>;
type Json = { [key: string]: JsonValue };

export class OperatorService {
  private readonly checkpoints: Checkpoints;

  private readonly desk: ApprovalDesk;

  private readonly queries: OperatorQueries;

  private readonly control: ControlActions;

  private readonly reassignment: Reassignment;

  constructor(private readonly deps: OperatorDeps) {
    this.checkpoints = new Checkpoints(deps);
    this.desk = new ApprovalDesk({ dispatcher: deps.dispatcher, clock: deps.clock, ...(deps.gates ? { gates: deps.gates } : {}) });
    this.queries = new OperatorQueries(deps);
    const lineage = new Lineage(deps);
    this.control = new ControlActions({ ...{}, ...deps, lineage, openAttempts: () => this.openAttempts(), checkpoint: (id, reason, by) => this.checkpoint(id, reason, by) });
    this.reassignment = new Reassignment({
      ...{}, ...deps,
      lineage,
      checkpoints: this.checkpoints,
      latestAttempt: async (delegationId) => (await this.attempts((a) => a.delegation_ref.object_id === delegationId, 1))[0],
    });
  }

  /** The approvals queue, newest first (src/operator/approvals.ts). */
  listApprovals(opts: { state?: RequestState; limit?: number } = {}): Promise<ApprovalSummary[]> {
    return this.desk.list(opts);
  }

  /** One request with its exact effect preview, decision and the task as the caller sees it. */
  showApproval(taskId: string): Promise<ApprovalDetail> {
    return this.desk.show(taskId);
  }

  /** Approves the exact preview the operator saw (its digest), then admits and forwards the effect. */
  approve(taskId: string, previewDigest: string, note: string, by: ActorRef, opts: { forward?: boolean } = {}): Promise<ApprovalOutcome> {
    return this.desk.approve(taskId, previewDigest, note, by, opts);
  }

  /** Denies: the task ends REJECTED and nothing is forwarded. */
  deny(taskId: string, previewDigest: string, note: string, by: ActorRef): Promise<ApprovalOutcome> {
    return this.desk.deny(taskId, previewDigest, note, by);
  }

  /** RW-003 §6 T4: an independent reviewer's decision before a verified effect is projected `succeeded`. */
  review(taskId: string, decision: 'approve' | 'deny', note: string, by: ActorRef) {
    return this.desk.review(taskId, decision, note, by);
  }

  revokeDelegation(id: string, reason: string, by: ActorRef): Promise<ControlEvent> {
    return this.control.revokeDelegation(id, reason, by);
  }

  /** Suspend (or resume) a delegation: an amendment of its lifecycle; the head moves, fences taken before fail. */
  setDelegationLifecycle(id: string, lifecycle: 'suspended' | 'active', reason: string, by: ActorRef): Promise<ControlEvent> {
    return this.control.setDelegationLifecycle(id, lifecycle, reason, by);
  }

  /** Amends a delegation's terms: a new, narrower contract revision (RW-003 §5), recorded on its stream. */
  amendDelegation(id: string, terms: unknown, reason: string, by: ActorRef): Promise<{ event: ControlEvent; contract: DelegationContract }> {
    return this.control.amendDelegation(id, terms, reason, by);
  }

  setCardLifecycle(agentCardId: string, lifecycle: (typeof CARD_STATES)[number], reason: string, by: ActorRef): Promise<ControlEvent> {
    return this.control.setCardLifecycle(agentCardId, lifecycle, reason, by);
  }

  /** Trips a breaker (RW-003 §7.3), checkpoints the running attempts under it and escalates. */
  tripBreaker(kind: ScopeKind, id: string, trigger: BreakerTrigger, reason: string, by: ActorRef): Promise<{ event: ControlEvent; checkpoints: string[] }> {
    return this.control.tripBreaker(kind, id, trigger, reason, by);
  }

  resetBreaker(kind: ScopeKind, id: string, reason: string, by: ActorRef): Promise<ControlEvent> {
    return this.control.resetBreaker(kind, id, reason, by);
  }

  /** Attempts whose reservation is unresolved: the ones that may still be running. */
  openAttempts(limit = 1000): Promise<Attempt[]> {
    return this.queries.openAttempts(limit);
  }

  /** Current attempts newest first, filtered; a bounded scan of the attempt records. */
  attempts(match: (a: AttemptBody) => boolean, limit = 100): Promise<Attempt[]> {
    return this.queries.attempts(match, limit);
  }

  /** Delegation trees with their budgets and the outcomes of the attempts under them, newest roots first. */
  trees(limit = 20) {
    return this.queries.trees(limit);
  }

  /** One page of delegation trees filtered by caller, delegatee, state and time (the console's Delegations view). */
  treePage(q: TreeQuery) {
    return this.queries.treePage(q);
  }

  /** Everything recorded about one attempt: revisions, input, decision, receipts, checkpoints, reservation, events, fenced heads. */
  attemptAudit(id: string): Promise<Json> {
    return this.queries.attemptAudit(id);
  }

  /** Writes a DelegationCheckpoint for an attempt (RW-003 §7.2) and records it on the attempt's stream. */
  checkpoint(attemptId: string, reason: string, by: ActorRef): Promise<Checkpoint> {
    return this.checkpoints.write(attemptId, reason, by);
  }

  /** RW-003 §11.4 mid-execution reassignment, as named resumable steps (src/operator/reassignment.ts). */
  reassign(delegationId: string, req: ReassignRequest, by: ActorRef): Promise<Reassigned> {
    return this.reassignment.run(delegationId, req, by);
  }

  escalationList(state?: 'open' | 'acknowledged', limit?: number) {
    return this.deps.escalations.list({ ...{}, ...(state ? { state } : {}), ...(limit ? { limit } : {}) });
  }

  acknowledge(id: string, note: string, by: ActorRef) {
    return this.deps.escalations.acknowledge(id, by, note);
  }

  deliveries(filter: { status?: DeliveryStatus; task_id?: string; limit: number }) {
    return this.deps.store.push.deliveries(filter);
  }

  async requeue(deliveryId: string): Promise<void> {
    const ok = this.deps.requeue ? await this.deps.requeue(deliveryId) : await this.deps.store.push.requeue(deliveryId, this.deps.clock.now().toISOString());
    if (!ok) throw requeueRefused(deliveryId, await this.deps.store.push.delivery(deliveryId));
  }

  auditVerify() {
    return auditStore(this.deps.store.audit, {}, this.deps.store.content);
  }

  /** `baton retention purge` / POST /admin/retention/purge (src/retention/purge.ts). */
  purgeContent(before: Date, by: ActorRef) {
    return purgeContent({ store: this.deps.store, clock: this.deps.clock, ids: this.deps.ids }, before, by, 'operator');
  }
}
