/**
 * The operator's control actions (RW-003 §7): revoke, suspend or amend a
 * delegation, change a card's lifecycle, trip or reset a breaker. Each
 * appends to an existing authority stream; nothing is erased or rewritten.
 */
import { reviseChild } from '../contracts/mint.ts';
import type { DelegationContract } from '../contracts/model.ts';
import { BREAKER_TRIGGERS, type BreakerTrigger } from '../control/breaker.ts';
import type { ControlEvent, EventType } from '../control/event.ts';
import { streamKey, streamOf, type ControlScopeRef, type ScopeKind } from '../control/scope.ts';
import { invalidRequest } from '../errors.ts';
import { refOf, type SealedRecord } from '../records/envelope.ts';
import type { ActorRef } from '../records/revision-ref.ts';
import type { AttemptBody } from '../attempts/record.ts';
import type { Checkpoint } from './checkpoints.ts';
import { scopeIn, type OperatorDeps } from './deps.ts';
import type { Lineage } from './lineage.ts';
import { CARD_STATES } from './card-states.ts';

export interface ControlActionDeps extends Pick<OperatorDeps, 'store' | 'escalations' | 'gatewayActor' | 'spaceId'> {
  lineage: Lineage;
  /** The attempts that may still be running (src/operator/queries.ts). */
  openAttempts: () => Promise<Array<SealedRecord<AttemptBody>>>;
  /** Writes a checkpoint of a running attempt (src/operator/checkpoints.ts). */
  checkpoint: (attemptId: string, reason: string, by: ActorRef) => Promise<Checkpoint>;
}

export class ControlActions {
  constructor(private readonly deps: ControlActionDeps) {}

  /**
   * The stream an action appends to. A delegation's stream lives in its
   * owner's space: for one imported from a separate-store upstream that is
   * the upstream's (its node here says so), so its operator can still revoke,
   * suspend, trip and reset it (issue 25 item 13).
   */
  private async scope(kind: ScopeKind, id: string): Promise<ControlScopeRef> {
    const node = kind === 'delegation' ? await this.deps.store.ledger.node(id) : undefined;
    return scopeIn(node?.space_id ?? this.deps.spaceId, kind, id);
  }

  /** Appends to an existing authority stream only: an operator cannot conjure a scope into being. */
  private async append(at: ControlScopeRef | Promise<ControlScopeRef>, event_type: EventType, by: ActorRef, payload: Record<string, unknown>, extra: Partial<{ produced_records: ReturnType<typeof refOf>[]; evidence: ReturnType<typeof refOf>[] }> = {}): Promise<ControlEvent> {
    const scope = await at;
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
    const current = await this.deps.lineage.contract(id);
    const parents = await this.deps.lineage.parentChain(current);
    const revised = await reviseChild(
      parents,
      current,
      { delegatee: { ...{}, ...current.body.delegatee_agent_ref, operator_ref: current.body.accountable_operator_ref }, objective: current.body.objective, input_revisions: current.body.input_revisions, terms },
      new Map(),
      this.deps.gatewayActor,
      this.deps.lineage.mintDeps(),
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
    const scope = await this.scope(kind, id);
    const event = await this.append(scope, 'rw003.circuit_breaker.tripped', by, { action: 'trip', trigger, reason: reason.slice(0, 2048) });
    const key = streamKey(streamOf(scope));
    const checkpoints: string[] = [];
    for (const a of await this.deps.openAttempts()) {
      if (!a.body.fence_set.some((b) => streamKey(b) === key)) continue;
      checkpoints.push((await this.deps.checkpoint(a.record_id, `breaker tripped (${trigger}): ${reason}`, by)).record_id);
    }
    await this.deps.escalations.raise('breaker_tripped', { scope: `${kind}:${id}` }, [`trigger: ${trigger}`, reason, `${checkpoints.length} running attempt(s) checkpointed`]);
    return { event, checkpoints };
  }

  async resetBreaker(kind: ScopeKind, id: string, reason: string, by: ActorRef): Promise<ControlEvent> {
    // A reset moves the head too: on a scope that is not tripped it would only invalidate running work.
    const scope = await this.scope(kind, id);
    const head = await this.deps.store.control.head(scope);
    if (head && head.state !== 'tripped') throw invalidRequest('this breaker is not tripped', { scope: `${kind}:${id.slice(0, 128)}`, state: head.state });
    return this.append(scope, 'rw003.circuit_breaker.tripped', by, { action: 'reset', reason: reason.slice(0, 2048) });
  }
}
