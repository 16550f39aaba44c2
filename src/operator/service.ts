/**
 * Every operator action, once: the admin API and the CLI both call these.
 * Each action appends control events or records; nothing is erased or
 * rewritten. Stopping running work after a revocation, suspension or breaker
 * trip is the serving gateway's revocation sweep (it sees the fences move
 * within `revocationSweepMs`), so an action taken from the CLI and one taken
 * through the API have the same effect.
 */
import { resumeFailures, type ReconciliationState } from '../attempts/checkpoint.ts';
import { auditStore } from '../audit/scan.ts';
import { reviseChild } from '../contracts/mint.ts';
import { loadChain } from '../contracts/attestation-chain.ts';
import { parseContract, type DelegationContract } from '../contracts/model.ts';
import { defaultScopeRegistry } from '../contracts/scope.ts';
import { BREAKER_TRIGGERS, type BreakerTrigger } from '../control/breaker.ts';
import type { ControlEvent, EventType } from '../control/event.ts';
import type { StreamHead } from '../control/fence.ts';
import { streamKey, streamOf, type ControlScopeRef, type ScopeKind } from '../control/scope.ts';
import { contextInvalidated, invalidRequest } from '../errors.ts';
import type { AttemptBody, TaskInputBody } from '../gateway/attempt-record.ts';
import type { DelegationAuthority } from '../gateway/authority.ts';
import type { DelegateeRegistry } from '../gateway/delegatees.ts';
import type { Dispatcher } from '../gateway/dispatcher.ts';
import type { RemoteClient } from '../gateway/remote.ts';
import type { Keyring } from '../keys/keyring.ts';
import { refOf, type SealedRecord } from '../records/envelope.ts';
import type { IdSource } from '../records/ids.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import { schemaRefFor } from '../records/schema-ref.ts';
import type { JsonValue } from '../records/strict-json.ts';
import type { Clock } from '../records/time.ts';
import type { DeliveryStatus, Store } from '../store/port.ts';
import { currentWhere } from '../store/scan.ts';
import type { Envelope } from '../records/envelope.ts';
import type { Escalations } from './escalation.ts';
import { Checkpoints, findNode, type Checkpoint } from './checkpoints.ts';
import { attemptOf } from '../gateway/attempts.ts';
import type { HumanGates } from '../gates/approvals.ts';
import type { RequestState } from '../gates/rules.ts';
import { ApprovalDesk, type ApprovalDetail, type ApprovalOutcome, type ApprovalSummary } from './approvals.ts';

export type { Checkpoint } from './checkpoints.ts';
export type { ApprovalDetail, ApprovalOutcome, ApprovalSummary } from './approvals.ts';

type Attempt = SealedRecord<AttemptBody>;
type Json = { [key: string]: JsonValue };

export { BREAKER_TRIGGERS, type BreakerTrigger } from '../control/breaker.ts';

export const CARD_STATES = ['active', 'suspended', 'revoked', 'retired'] as const;

export interface OperatorDeps {
  store: Store;
  dispatcher: Dispatcher;
  delegatees: DelegateeRegistry;
  authority: DelegationAuthority;
  remote: RemoteClient;
  keyring: Keyring;
  escalations: Escalations;
  clock: Clock;
  ids: IdSource;
  spaceId: string;
  /** Baton's own actor: it mints revisions under the parent it is delegatee of. */
  gatewayActor: ActorRef;
  /** Requeues a dead delivery (the push outbox); absent when push is off. */
  requeue?: (deliveryId: string) => Promise<boolean>;
  /** Moves webhooks from a replaced attempt to its successor; absent when push is off. */
  carryPush?: (fromTaskId: string, toTaskId: string) => Promise<unknown>;
  /** Human authority gates; absent when no approvals are configured. */
  gates?: HumanGates;
}

const ATTEMPT_SCHEMA = schemaRefFor('execution_attempt');

export class OperatorService {
  private readonly checkpoints: Checkpoints;

  private readonly desk: ApprovalDesk;

  constructor(private readonly deps: OperatorDeps) {
    this.checkpoints = new Checkpoints(deps);
    this.desk = new ApprovalDesk({ dispatcher: deps.dispatcher, clock: deps.clock, ...(deps.gates ? { gates: deps.gates } : {}) });
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

  private scope(kind: ScopeKind, id: string): ControlScopeRef {
    return { space_id: this.deps.spaceId, scope_kind: kind, scope_id: id };
  }

  /** Appends to an existing authority stream only: an operator cannot conjure a scope into being. */
  private async append(scope: ControlScopeRef, event_type: EventType, by: ActorRef, payload: Record<string, unknown>, extra: Partial<{ produced_records: ReturnType<typeof refOf>[]; evidence: ReturnType<typeof refOf>[] }> = {}): Promise<ControlEvent> {
    if (!(await this.deps.store.control.head(scope))) throw invalidRequest(`no such ${scope.scope_kind} in this space`, { [scope.scope_kind]: scope.scope_id.slice(0, 128) });
    return this.deps.store.control.appendControl({ event_type, control_scope_ref: scope, actor_ref: by, payload, ...extra });
  }

  revokeDelegation(id: string, reason: string, by: ActorRef): Promise<ControlEvent> {
    return this.append(this.scope('delegation', id), 'rw003.delegation.revoked', by, { reason: reason.slice(0, 2048) });
  }

  /** Suspend (or resume) a delegation: an amendment of its lifecycle; the head moves, fences taken before fail. */
  setDelegationLifecycle(id: string, lifecycle: 'suspended' | 'active', reason: string, by: ActorRef): Promise<ControlEvent> {
    return this.append(this.scope('delegation', id), 'rw003.delegation.amended', by, { lifecycle, reason: reason.slice(0, 2048) });
  }

  /**
   * Amends a delegation's terms: a new contract revision, narrower on every
   * dimension named (RW-003 §5: amendments only narrow), recorded on its stream.
   */
  async amendDelegation(id: string, terms: unknown, reason: string, by: ActorRef): Promise<{ event: ControlEvent; contract: DelegationContract }> {
    const current = await this.contract(id);
    const parents = await this.parentChain(current);
    const revised = await reviseChild(
      parents,
      current,
      { delegatee: { ...current.body.delegatee_agent_ref, operator_ref: current.body.accountable_operator_ref }, objective: current.body.objective, input_revisions: current.body.input_revisions, terms },
      new Map(),
      this.deps.gatewayActor,
      this.mintDeps(),
    );
    await this.deps.store.putRecord(revised);
    // The ledger enforces budgets, not the contract text: lower the node's ceilings with it.
    await this.deps.store.ledger.narrow(id, new Map(revised.body.budget_ceilings.map((b) => [b.name, BigInt(b.ceiling)])));
    const event = await this.append(this.scope('delegation', id), 'rw003.delegation.amended', by, { reason: reason.slice(0, 2048), contract_revision: revised.revision_id }, { produced_records: [refOf(revised)] });
    return { event, contract: revised };
  }

  setCardLifecycle(agentCardId: string, lifecycle: (typeof CARD_STATES)[number], reason: string, by: ActorRef): Promise<ControlEvent> {
    if (!(CARD_STATES as readonly string[]).includes(lifecycle)) throw invalidRequest('unknown card lifecycle', { lifecycle, allowed: CARD_STATES });
    return this.append(this.scope('agent', agentCardId), 'rw003.agent_card.lifecycle_changed', by, { lifecycle, reason: reason.slice(0, 2048) });
  }

  /**
   * Trips a breaker on a delegation, agent, space, policy or consent scope
   * (RW-003 §7.3): appends the event (new effects are blocked by the fence),
   * checkpoints every running attempt under it and escalates. The serving
   * gateway's sweep then cancels those attempts with the breaker as cause.
   */
  async tripBreaker(kind: ScopeKind, id: string, trigger: BreakerTrigger, reason: string, by: ActorRef): Promise<{ event: ControlEvent; checkpoints: string[] }> {
    if (!(BREAKER_TRIGGERS as readonly string[]).includes(trigger)) throw invalidRequest('unknown breaker trigger', { trigger, allowed: BREAKER_TRIGGERS });
    if (kind === 'attempt') throw invalidRequest('breakers guard authority scopes, not attempts');
    const scope = this.scope(kind, id);
    const event = await this.append(scope, 'rw003.circuit_breaker.tripped', by, { action: 'trip', trigger, reason: reason.slice(0, 2048) });
    const key = streamKey(streamOf(scope));
    const checkpoints: string[] = [];
    for (const a of await this.openAttempts()) {
      if (!a.body.fence_set.some((b) => streamKey(b) === key)) continue;
      checkpoints.push((await this.checkpoint(a.record_id, `breaker tripped (${trigger}): ${reason}`, by)).record_id);
    }
    await this.deps.escalations.raise('breaker_tripped', { scope: `${kind}:${id}` }, [`trigger: ${trigger}`, reason, `${checkpoints.length} running attempt(s) checkpointed`]);
    return { event, checkpoints };
  }

  async resetBreaker(kind: ScopeKind, id: string, reason: string, by: ActorRef): Promise<ControlEvent> {
    // A reset moves the head too: on a scope that is not tripped it would only invalidate running work.
    const head = await this.deps.store.control.head(this.scope(kind, id));
    if (head && head.state !== 'tripped') throw invalidRequest('this breaker is not tripped', { scope: `${kind}:${id.slice(0, 128)}`, state: head.state });
    return this.append(this.scope(kind, id), 'rw003.circuit_breaker.tripped', by, { action: 'reset', reason: reason.slice(0, 2048) });
  }

  /** Attempts whose reservation is unresolved: the ones that may still be running. */
  async openAttempts(limit = 1000): Promise<Attempt[]> {
    const out: Attempt[] = [];
    for (const r of await this.deps.store.ledger.unresolved(limit)) {
      const a = await this.deps.dispatcher.openAttemptOf(r);
      if (a) out.push(a);
    }
    return out;
  }

  /** Current attempts newest first, filtered; a bounded scan of the attempt records. */
  async attempts(match: (a: AttemptBody) => boolean, limit = 100): Promise<Attempt[]> {
    return currentWhere<Attempt & Envelope>(this.deps.store, ATTEMPT_SCHEMA, (r) => match(r.body), { limit, pages: 50, pageSize: 500 });
  }

  /** Delegation trees with their budgets and the outcomes of the attempts under them, newest roots first. */
  async trees(limit = 20): Promise<Array<{ root: string; tree: unknown; attempts: Array<Pick<AttemptBody, 'attempt_id' | 'delegatee_id' | 'state' | 'outcome' | 'caller_id'> & { delegation_id: string }> }>> {
    const byRoot = new Map<string, Attempt[]>();
    for (const a of await this.attempts(() => true, 2000)) {
      const root = a.body.root_ref.object_id;
      if (!byRoot.has(root) && byRoot.size >= limit) continue;
      byRoot.set(root, [...(byRoot.get(root) ?? []), a]);
    }
    const out = [];
    for (const [root, attempts] of byRoot) {
      out.push({
        root,
        tree: await this.deps.store.ledger.tree(root),
        attempts: attempts.map((a) => ({ attempt_id: a.body.attempt_id, delegation_id: a.body.delegation_ref.object_id, delegatee_id: a.body.delegatee_id, caller_id: a.body.caller_id, state: a.body.state, ...(a.body.outcome ? { outcome: a.body.outcome } : {}) })),
      });
    }
    return out;
  }

  /** Everything recorded about one attempt: revisions, input, decision, receipts, checkpoints, reservation, events, fenced heads. */
  async attemptAudit(id: string): Promise<Json> {
    const revisions = await this.deps.store.listRevisions(id);
    const latest = attemptOf(revisions[revisions.length - 1]);
    if (!latest) throw invalidRequest('no such attempt', { attempt: id.slice(0, 128) });
    const reservation = await this.deps.store.ledger.reservation(latest.body.reservation_id);
    const events = await this.deps.store.control.readStream(streamOf(this.scope('attempt', id)), { limit: 1000 });
    const produced = [...new Set(events.flatMap((e) => e.produced_records.map((r) => `${r.object_id}\u0000${r.revision_id}`)))];
    const records = [];
    for (const key of produced) {
      const [objectId, revisionId] = key.split('\u0000') as [string, string];
      const r = await this.deps.store.getRecord(objectId, revisionId);
      if (r && r.record_id !== id) records.push(r);
    }
    const input = latest.body.input_ref ? await this.deps.store.getRecord(latest.body.input_ref.object_id, latest.body.input_ref.revision_id) : undefined;
    const decision = reservation ? await this.deps.store.getByDigest(reservation.decision_ref.content_digest) : undefined;
    const heads = [];
    for (const b of latest.body.fence_set) {
      const h = await this.deps.store.control.streamHead(b);
      heads.push({ branch_id: b.branch_id, fenced_position: b.position, head_position: h?.position ?? null, state: h?.state ?? null, moved: h?.event_id !== b.event_id });
    }
    return {
      attempt: latest as unknown as JsonValue,
      revisions: revisions.map((r) => ({ revision_id: r.revision_id, issued_at: r.issued_at, state: attemptOf(r)!.body.state, outcome: attemptOf(r)!.body.outcome ?? null, content_digest: r.content_digest })),
      input: (input ?? null) as unknown as JsonValue,
      decision: (decision ?? null) as unknown as JsonValue,
      reservation: (reservation ?? null) as unknown as JsonValue,
      events: events as unknown as JsonValue,
      records: records as unknown as JsonValue,
      fences: heads as unknown as JsonValue,
    };
  }

  /** Writes a DelegationCheckpoint for an attempt (RW-003 §7.2) and records it on the attempt's stream. */
  checkpoint(attemptId: string, reason: string, by: ActorRef): Promise<Checkpoint> {
    return this.checkpoints.write(attemptId, reason, by);
  }

  /**
   * RW-003 §11.4 mid-execution reassignment. Validates the checkpoint first
   * (heads, input fixity, reconciliation, budget) and stops with an
   * escalation if anything no longer holds; otherwise revokes the delegation
   * on its stream, issues the next contract revision for `to` with the same
   * or narrower scope and the remaining budget, records the reassignment,
   * and starts a new attempt from the checkpoint under a fresh fence set.
   * The previous attempt is never rewritten.
   */
  async reassign(
    delegationId: string,
    req: { to: string; checkpoint?: string; resolvePrevious?: { as: 'not_dispatched' | 'consumed'; note: string }; reason: string },
    by: ActorRef,
  ): Promise<{ checkpoint: string; revoked: ControlEvent; reassigned: ControlEvent; contract: DelegationContract; attempt: Attempt }> {
    const current = await this.contract(delegationId);
    const [prior] = await this.attempts((a) => a.delegation_ref.object_id === delegationId, 1);
    if (!prior) throw invalidRequest('no attempt runs under this delegation', { delegation: delegationId.slice(0, 128) });
    if (req.to === prior.body.delegatee_id) throw invalidRequest('reassignment needs another delegatee');
    const target = await this.deps.delegatees.resolve(req.to);
    const cp = req.checkpoint ? await this.checkpoints.load(req.checkpoint, prior.record_id) : ((await this.checkpoints.latest(prior.record_id)) ?? (await this.checkpoint(prior.record_id, `reassignment: ${req.reason}`, by)));
    if (req.resolvePrevious?.as === 'not_dispatched' && prior.body.remote.task_id !== undefined) {
      throw invalidRequest('the previous task was dispatched (the delegatee named it); it can only be resolved as consumed');
    }
    const refuse = async (failures: string[]) => {
      await this.deps.escalations.raise('reassignment_refused', { attempt_id: prior.record_id, delegation_id: delegationId }, failures);
      return contextInvalidated('reassignment stopped: the checkpoint no longer holds', { reasons: failures, checkpoint: cp.record_id });
    };
    // Everything that does not depend on the previous effect first: a refusal here changes nothing but the escalation log.
    const early = await this.resumeCheck(cp, prior, current, 'ignore');
    if (early.length > 0) throw await refuse(early);

    // RW-003 §11.4: revoke on the delegation's stream (DB4 → DB5), exactly once: a racing reassignment finds the head moved.
    const dScope = this.scope('delegation', delegationId);
    const dHead = (await this.deps.store.control.head(dScope))!;
    const revoked = await this.deps.store.control.appendControl(
      { event_type: 'rw003.delegation.revoked', control_scope_ref: dScope, actor_ref: by, evidence: [refOf(cp)], payload: { reason: req.reason.slice(0, 2048), reassignment: true } },
      { expectedHead: { position: dHead.position, event_id: dHead.event_id }, at: this.deps.clock.now().toISOString() },
    );
    // Then stop the previous attempt and read it back; only then is its effect known well enough to continue.
    const stopped = prior.body.state === 'closed' ? prior : await this.deps.dispatcher.stop(prior, 'reassignment', req.reason).catch(() => prior);
    if (stopped.body.outcome === 'succeeded') {
      throw await refuse(['the previous attempt completed and was verified: reassigning would repeat its effect (the delegation stays revoked)']);
    }
    const reservation = await this.deps.store.ledger.reservation(prior.body.reservation_id);
    if (reservation && (reservation.status === 'held' || reservation.status === 'unknown')) {
      if (!req.resolvePrevious) throw await refuse(['the previous effect is unreconciled: resolve it (resolvePrevious, with evidence) and reassign again']);
      await this.deps.dispatcher.resolveManually(reservation.reservation_id, req.resolvePrevious.as, req.resolvePrevious.note, by);
    }
    const late = await this.resumeCheck(cp, prior, current, 'check');
    if (late.length > 0) throw await refuse(late);
    const input = (await this.deps.store.getRecord(cp.body.input_revisions[0]!.object_id, cp.body.input_revisions[0]!.revision_id)) as unknown as SealedRecord<TaskInputBody>;
    if (input.body.message === null) throw invalidRequest('the input was too large to keep; resubmit it as a new task');

    const remaining = await this.remaining(prior.body.root_ref.object_id, delegationId);
    const parents = await this.parentChain(current);
    const revision = await reviseChild(
      parents,
      current,
      { delegatee: target.option, objective: current.body.objective, input_revisions: cp.body.input_revisions },
      remaining,
      this.deps.gatewayActor,
      this.mintDeps(),
    );
    await this.deps.store.putRecord(revision);
    // Right after our own revocation: anything appended in between (another operator) stops this one.
    const reassigned = await this.deps.store.control.appendControl(
      {
        event_type: 'rw003.delegation.reassigned',
        control_scope_ref: dScope,
        actor_ref: by,
        produced_records: [refOf(revision)],
        evidence: [refOf(cp)],
        payload: { contract_revision: revision.revision_id, from_card: current.body.delegatee_agent_ref.card_ref.object_id, to_card: target.option.card_ref.object_id, checkpoint: cp.record_id, reason: req.reason.slice(0, 2048) },
      },
      { expectedHead: { position: revoked.position, event_id: revoked.event_id }, at: this.deps.clock.now().toISOString() },
    );
    const attempt = await this.deps.dispatcher.startResumed(prior, [...parents.contracts, revision], req.to, input.body.message as Json, refOf(cp));
    await this.deps.carryPush?.(prior.record_id, attempt.record_id);
    return { checkpoint: cp.record_id, revoked, reassigned, contract: revision, attempt };
  }

  /** RW-003 §7.2: what must still hold for a resume from `cp`. */
  private async resumeCheck(cp: Checkpoint, prior: Attempt, current: DelegationContract, reconciliation: 'ignore' | 'check'): Promise<string[]> {
    const heads = new Map<string, StreamHead>();
    for (const b of cp.body.control_fence_set) {
      const h = await this.deps.store.control.streamHead(b);
      if (h) heads.set(streamKey(b), h);
    }
    // The delegation being reassigned, and the agent it leaves, may have moved; nothing else may.
    const moved = new Set([
      streamKey(streamOf(this.scope('delegation', current.record_id))),
      streamKey(streamOf(this.scope('agent', current.body.delegatee_agent_ref.card_ref.object_id))),
    ]);
    const ref = cp.body.input_revisions[0];
    const input = ref ? await this.deps.store.getRecord(ref.object_id, ref.revision_id) : undefined;
    const reservation = await this.deps.store.ledger.reservation(prior.body.reservation_id);
    const failures = resumeFailures(cp.body, {
      heads,
      moved,
      inputDigest: input?.content_digest,
      expectedInputDigest: ref?.content_digest,
      reservation: reconciliation === 'ignore' ? 'settled' : ((reservation?.status ?? 'none') as ReconciliationState),
      // The previous effect's reservation is what a resolution would consume; it is not budget left.
      remaining: [...(await this.remaining(prior.body.root_ref.object_id, current.record_id))].map(([dimension, remaining]) => ({ dimension, remaining })),
    });
    if (cp.body.delegation_ref.object_id !== current.record_id) failures.push('the checkpoint belongs to another delegation');
    return failures;
  }

  /** What a delegation's ledger node has left per dimension: ceiling minus consumed and reserved. */
  private async remaining(rootId: string, nodeId: string): Promise<Map<string, bigint>> {
    const node = findNode(await this.deps.store.ledger.tree(rootId), nodeId);
    return new Map((node?.balances ?? []).map((b) => [b.dimension, BigInt(b.ceiling) - BigInt(b.consumed) - BigInt(b.reserved)]));
  }

  private async contract(id: string): Promise<DelegationContract> {
    const record = await this.deps.store.getRecord(id);
    if (!record) throw invalidRequest('no such delegation', { delegation: id.slice(0, 128) });
    const c = parseContract(record);
    if (c.body.lineage.kind !== 'child') throw invalidRequest('only a child delegation can be amended or reassigned; revoke a root instead');
    return c;
  }

  /** The contract's ancestors, re-verified now (their heads must still permit effects). */
  private async parentChain(c: DelegationContract) {
    if (c.body.lineage.kind !== 'child') throw new TypeError('root has no parent');
    const records = await loadChain(this.deps.store, c.body.lineage.parent_ref);
    return this.deps.authority.evaluate(records.map((r) => parseContract(r)));
  }

  private mintDeps() {
    const k = this.deps.keyring.current('ES256');
    return { clock: this.deps.clock, ids: this.deps.ids, signer: { actorRef: this.deps.gatewayActor, kid: k.kid, alg: 'ES256' as const, key: k.privateKey }, registry: defaultScopeRegistry };
  }

  escalationList(state?: 'open' | 'acknowledged', limit?: number) {
    return this.deps.escalations.list({ ...(state ? { state } : {}), ...(limit ? { limit } : {}) });
  }

  acknowledge(id: string, note: string, by: ActorRef) {
    return this.deps.escalations.acknowledge(id, by, note);
  }

  deliveries(filter: { status?: DeliveryStatus; task_id?: string; limit: number }) {
    return this.deps.store.push.deliveries(filter);
  }

  async requeue(deliveryId: string): Promise<void> {
    const ok = this.deps.requeue ? await this.deps.requeue(deliveryId) : await this.deps.store.push.requeue(deliveryId, this.deps.clock.now().toISOString());
    if (!ok) {
      const d = await this.deps.store.push.delivery(deliveryId);
      throw invalidRequest(d ? `delivery is ${d.status}, not dead` : 'no such delivery', { delivery: deliveryId.slice(0, 128) });
    }
  }

  auditVerify() {
    return auditStore(this.deps.store.audit);
  }
}
