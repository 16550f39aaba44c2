/**
 * RW-003 §11.4 mid-execution reassignment as an explicit sequence of named
 * steps. Each step either changes nothing but the escalation log (a refusal)
 * or leaves a durable fact the next run reads back: the revocation and the
 * reassignment are control events on the delegation's stream (appended
 * against the head just read, so a racing reassignment stops), the previous
 * attempt's stop and its reconciliation are in its record and reservation,
 * and the new revision is an immutable record. A reassignment interrupted
 * between steps is resumed by running it again: the delegation's own stream
 * may have moved (RW-003 §7.2 lets it), the previous effect is read back and
 * is not repeated. The previous attempt is never rewritten.
 */
import { resumeFailures, type ReconciliationState } from '../attempts/checkpoint.ts';
import type { AttemptBody, TaskInputBody } from '../attempts/record.ts';
import { reviseChild } from '../contracts/mint.ts';
import type { DelegationContract } from '../contracts/model.ts';
import type { ControlEvent } from '../control/event.ts';
import type { StreamHead } from '../control/fence.ts';
import { streamKey, streamOf, type ControlScopeRef } from '../control/scope.ts';
import { contextInvalidated, invalidRequest, type BatonError } from '../errors.ts';
import type { DelegateeRegistry } from '../gateway/delegatees.ts';
import { inputContentOf } from '../gateway/task-input.ts';
import { refOf, type SealedRecord } from '../records/envelope.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import type { Checkpoint, Checkpoints } from './checkpoints.ts';
import { scopeIn, type OperatorDeps } from './deps.ts';
import type { Lineage } from './lineage.ts';

type Attempt = SealedRecord<AttemptBody>;
type Target = Awaited<ReturnType<DelegateeRegistry['resolve']>>;

export interface ReassignRequest {
  to: string;
  checkpoint?: string;
  resolvePrevious?: { as: 'not_dispatched' | 'consumed'; note: string };
  reason: string;
}

export interface Reassigned {
  checkpoint: string;
  revoked: ControlEvent;
  reassigned: ControlEvent;
  contract: DelegationContract;
  attempt: Attempt;
}

export interface ReassignmentDeps extends Pick<OperatorDeps, 'store' | 'dispatcher' | 'delegatees' | 'escalations' | 'clock' | 'gatewayActor' | 'spaceId' | 'carryPush'> {
  lineage: Lineage;
  checkpoints: Checkpoints;
  /** The newest current attempt under a delegation (src/operator/queries.ts). */
  latestAttempt: (delegationId: string) => Promise<Attempt | undefined>;
}

/** What the steps carry from one to the next. */
interface Run {
  delegationId: string;
  req: ReassignRequest;
  by: ActorRef;
  current: DelegationContract;
  prior: Attempt;
  target: Target;
  cp: Checkpoint;
  dScope: ControlScopeRef;
}

export class Reassignment {
  constructor(private readonly deps: ReassignmentDeps) {}

  /**
   * Validates the checkpoint first (heads, input fixity, reconciliation,
   * budget) and stops with an escalation if anything no longer holds;
   * otherwise revokes the delegation on its stream, issues the next contract
   * revision for `to` with the same or narrower scope and the remaining
   * budget, records the reassignment, and starts a new attempt from the
   * checkpoint under a fresh fence set.
   */
  async run(delegationId: string, req: ReassignRequest, by: ActorRef): Promise<Reassigned> {
    const run = await this.prepare(delegationId, req, by);
    await this.checkBeforeRevoking(run);
    const revoked = await this.revoke(run);
    await this.stopPrevious(run);
    await this.reconcilePrevious(run);
    await this.checkAfterStopping(run);
    const message = await this.readInput(run);
    const { revision, contracts } = await this.revise(run);
    const reassigned = await this.recordReassigned(run, headAfter(revoked), revision);
    const attempt = await this.startSuccessor(run, contracts, message);
    return { checkpoint: run.cp.record_id, revoked, reassigned, contract: revision, attempt };
  }

  /** Step 1: the delegation, the attempt under it, the new delegatee and the checkpoint to resume from. */
  private async prepare(delegationId: string, req: ReassignRequest, by: ActorRef): Promise<Run> {
    const current = await this.deps.lineage.contract(delegationId);
    const prior = await this.deps.latestAttempt(delegationId);
    if (!prior) throw invalidRequest('no attempt runs under this delegation', { delegation: delegationId.slice(0, 128) });
    if (req.to === prior.body.delegatee_id) throw invalidRequest('reassignment needs another delegatee');
    const target = await this.deps.delegatees.resolve(req.to);
    const { checkpoints } = this.deps;
    const cp = req.checkpoint
      ? await checkpoints.load(req.checkpoint, prior.record_id)
      : ((await checkpoints.latest(prior.record_id)) ?? (await checkpoints.write(prior.record_id, `reassignment: ${req.reason}`, by)));
    if (req.resolvePrevious?.as === 'not_dispatched' && (await this.deps.dispatcher.deps.attempts.remoteTaskId(prior)) !== undefined) {
      throw invalidRequest('the previous task was dispatched (the delegatee named it); it can only be resolved as consumed');
    }
    return { delegationId, req, by, current, prior, target, cp, dScope: scopeIn(this.deps.spaceId, 'delegation', delegationId) };
  }

  /** Step 2: everything that does not depend on the previous effect first: a refusal here changes nothing but the escalation log. */
  private async checkBeforeRevoking(run: Run): Promise<void> {
    const early = await this.resumeCheck(run, 'ignore');
    if (early.length > 0) throw await this.refuse(run, early);
  }

  /** Step 3 — RW-003 §11.4: revoke on the delegation's stream (DB4 → DB5), exactly once: a racing reassignment finds the head moved. */
  private async revoke(run: Run): Promise<ControlEvent> {
    const dHead = (await this.deps.store.control.head(run.dScope))!;
    return this.deps.store.control.appendControl(
      { event_type: 'rw003.delegation.revoked', control_scope_ref: run.dScope, actor_ref: run.by, evidence: [refOf(run.cp)], payload: { reason: run.req.reason.slice(0, 2048), reassignment: true } },
      { expectedHead: { position: dHead.position, event_id: dHead.event_id }, at: this.deps.clock.now().toISOString() },
    );
  }

  /** Step 4: stop the previous attempt and read it back; only then is its effect known well enough to continue. */
  private async stopPrevious(run: Run): Promise<void> {
    const { prior, req } = run;
    const stopped = prior.body.state === 'closed' ? prior : await this.deps.dispatcher.stop(prior, 'reassignment', req.reason).catch(() => prior);
    if (stopped.body.outcome === 'succeeded') {
      throw await this.refuse(run, ['the previous attempt completed and was verified: reassigning would repeat its effect (the delegation stays revoked)']);
    }
  }

  /** Step 5: an unreconciled previous effect is resolved by the operator's evidence, or the reassignment stops here. */
  private async reconcilePrevious(run: Run): Promise<void> {
    const reservation = await this.deps.store.ledger.reservation(run.prior.body.reservation_id);
    if (reservation && (reservation.status === 'held' || reservation.status === 'unknown')) {
      if (!run.req.resolvePrevious) throw await this.refuse(run, ['the previous effect is unreconciled: resolve it (resolvePrevious, with evidence) and reassign again']);
      await this.deps.dispatcher.resolveManually(reservation.reservation_id, run.req.resolvePrevious.as, run.req.resolvePrevious.note, run.by);
    }
  }

  /** Step 6: the checkpoint must still hold now that the previous effect is known (reconciliation included). */
  private async checkAfterStopping(run: Run): Promise<void> {
    const late = await this.resumeCheck(run, 'check');
    if (late.length > 0) throw await this.refuse(run, late);
  }

  /** Step 7: the exact input the checkpoint names, while retention still keeps it. */
  private async readInput(run: Run) {
    const ref = run.cp.body.input_revisions[0]!;
    const input = (await this.deps.store.getRecord(ref.object_id, ref.revision_id)) as unknown as SealedRecord<TaskInputBody>;
    const content = await inputContentOf(input, this.deps.store.content);
    if (content.state === 'purged') throw invalidRequest('the input was purged by retention; resubmit it as a new task', { purged_at: content.purged_at });
    if (content.state !== 'present') throw invalidRequest('the input was too large to keep; resubmit it as a new task');
    return content.message;
  }

  /** Step 8: the next contract revision for the new delegatee, same or narrower scope, the remaining budget. */
  private async revise(run: Run): Promise<{ revision: DelegationContract; contracts: DelegationContract[] }> {
    const { current, cp, target } = run;
    const remaining = await this.deps.lineage.remaining(run.prior.body.root_ref.object_id, run.delegationId);
    const parents = await this.deps.lineage.parentChain(current);
    const revision = await reviseChild(
      parents,
      current,
      { delegatee: target.option, objective: current.body.objective, input_revisions: cp.body.input_revisions },
      remaining,
      this.deps.gatewayActor,
      this.deps.lineage.mintDeps(),
    );
    await this.deps.store.putRecord(revision);
    return { revision, contracts: [...parents.contracts, revision] };
  }

  /** Step 9: right after our own revocation: anything appended in between (another operator) stops this one. */
  private async recordReassigned(run: Run, after: { position: number; event_id: string }, revision: DelegationContract): Promise<ControlEvent> {
    const { current, cp, target, req } = run;
    return this.deps.store.control.appendControl(
      {
        event_type: 'rw003.delegation.reassigned',
        control_scope_ref: run.dScope,
        actor_ref: run.by,
        produced_records: [refOf(revision)],
        evidence: [refOf(cp)],
        payload: { contract_revision: revision.revision_id, from_card: current.body.delegatee_agent_ref.card_ref.object_id, to_card: target.option.card_ref.object_id, checkpoint: cp.record_id, reason: req.reason.slice(0, 2048) },
      },
      { expectedHead: after, at: this.deps.clock.now().toISOString() },
    );
  }

  /** Step 10: a new attempt from the checkpoint under a fresh fence set; webhooks follow it. */
  private async startSuccessor(run: Run, contracts: DelegationContract[], message: Parameters<OperatorDeps['dispatcher']['startResumed']>[3]): Promise<Attempt> {
    const attempt = await this.deps.dispatcher.startResumed(run.prior, contracts, run.req.to, message, refOf(run.cp));
    await this.deps.carryPush?.(run.prior.record_id, attempt.record_id);
    return attempt;
  }

  private async refuse(run: Run, failures: string[]): Promise<BatonError> {
    await this.deps.escalations.raise('reassignment_refused', { attempt_id: run.prior.record_id, delegation_id: run.delegationId }, failures);
    return contextInvalidated('reassignment stopped: the checkpoint no longer holds', { reasons: failures, checkpoint: run.cp.record_id });
  }

  /** RW-003 §7.2: what must still hold for a resume from the checkpoint. */
  private async resumeCheck(run: Run, reconciliation: 'ignore' | 'check'): Promise<string[]> {
    const { cp, prior, current } = run;
    const heads = new Map<string, StreamHead>();
    for (const b of cp.body.control_fence_set) {
      const h = await this.deps.store.control.streamHead(b);
      if (h) heads.set(streamKey(b), h);
    }
    // The delegation being reassigned, and the agent it leaves, may have moved; nothing else may.
    const moved = new Set([
      streamKey(streamOf(scopeIn(this.deps.spaceId, 'delegation', current.record_id))),
      streamKey(streamOf(scopeIn(this.deps.spaceId, 'agent', current.body.delegatee_agent_ref.card_ref.object_id))),
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
      remaining: [...(await this.deps.lineage.remaining(prior.body.root_ref.object_id, current.record_id))].map(([dimension, remaining]) => ({ dimension, remaining })),
    });
    if (cp.body.delegation_ref.object_id !== current.record_id) failures.push('the checkpoint belongs to another delegation');
    return failures;
  }
}

/** The head our revocation left: the reassignment is appended against it. */
function headAfter(revoked: ControlEvent): { position: number; event_id: string } {
  return { position: revoked.position, event_id: revoked.event_id };
}
