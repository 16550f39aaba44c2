/**
 * Step 4: admission (ADR-0014 "Shared budgets and final admission"). One
 * durable transaction issues what is new (root, imported chain, child, each
 * with its budget and the preset's durable counters), validates the complete
 * fence set, reserves on root, ancestors and leaf, and records the
 * PermissionDecision, the attempt, its exact input and its follow-up row.
 * A refusal writes nothing. Nothing is forwarded before this commits.
 * (Just over 300 lines: first turns, follow-ups, approved and federated
 * effects all build the one admission program here.)
 */
import type { EvaluatedChain } from '../../contracts/admission.ts';
import type { DelegationContract } from '../../contracts/model.ts';
import type { ControlEventInput } from '../../control/event.ts';
import type { ControlBoundaryRef } from '../../control/fence.ts';
import type { ControlScopeRef } from '../../control/scope.ts';
import { isBatonError } from '../../errors.ts';
import { planOpens, unplacedParents, type Placement } from '../../ledger/plan.ts';
import type { AdmissionReceipt, AdmissionRequest, OpenBudgetRequest } from '../../ledger/types.ts';
import { refOf, sealRecord, type SealedRecord } from '../../records/envelope.ts';
import type { RevisionRef } from '../../records/revision-ref.ts';
import { utc } from '../../records/time.ts';
import type { RemoteFenceEntry } from '../../federation/head-statement.ts';
import type { JsonValue } from '../../records/strict-json.ts';
import type { AttemptBody } from '../../attempts/record.ts';
import type { Attempt } from '../attempts.ts';
import type { Caller } from '../callers.ts';
import type { ResolvedDelegatee } from '../delegatees.ts';
import type { DelegateeOption } from '../../contracts/presets.ts';
import { INVOCATIONS } from '../../contracts/machine-preset.ts';
import { CONTRACT_EXTENSION } from '../present.ts';
import { taskInput } from '../task-input.ts';
import type { PathDeps } from './deps.ts';
import { targetOf } from './resolve-target.ts';
import type { Json, Target, Turn } from './turn.ts';

/**
 * Where a turn goes, whatever the protocol (DESIGN "MCP is a second adapter,
 * not a second path"): the delegatee's id and identity, the remote facts every
 * attempt records (RW-003 §10.3), and how its result is judged.
 */
export interface Site {
  delegateeId: string;
  option: DelegateeOption;
  remote: Pick<AttemptBody['remote'], 'endpoint' | 'protocol' | 'protocol_version' | 'binding' | 'card_ref' | 'card' | 'extensions'>;
  target: Target;
  /** How long this node holds the turn before another may take it over (default: follow.leaseMs). */
  leaseMs?: number;
  /** What one effect charges the budget (default: one invocation). */
  amounts?: Record<string, bigint>;
  /** Fields the first revision of the attempt carries besides the common ones (e.g. an MCP call's tool). */
  attemptFields?: Partial<AttemptBody>;
}

/** An A2A delegatee as a site: its verified card, endpoint and version. */
export function a2aSite(resolved: ResolvedDelegatee): Site {
  return {
    delegateeId: resolved.config.id,
    option: resolved.option,
    remote: {
      endpoint: resolved.endpoint,
      protocol: 'a2a',
      protocol_version: resolved.protocolVersion,
      binding: 'JSONRPC',
      card_ref: resolved.option.card_ref,
      card: resolved.observation,
      extensions: [CONTRACT_EXTENSION],
    },
    target: targetOf(resolved),
  };
}

/** A turn just admitted, with what forwarding it needs. */
export interface AdmittedTurn extends Turn {
  contracts: readonly DelegationContract[];
}

/**
 * An effect a named human authority approved (src/gateway/path/gate.ts):
 * the attempt takes the task id the caller already holds, the admission
 * fences on the heads the approval saw, binds the AuthorityDecision into the
 * PermissionDecision, and commits the request's `admitted` revision — whose
 * prior must still be the approved head, so an approval is used once.
 */
export interface ApprovedEffect {
  attemptId: string;
  contextId: string;
  pinnedFence: readonly ControlBoundaryRef[];
  approval: { decision_ref: RevisionRef; request_ref: RevisionRef; tier: string };
  records: SealedRecord<Record<string, unknown>>[];
}

interface Plan {
  attemptId: string;
  pinnedFence?: readonly ControlBoundaryRef[];
  approval?: ApprovedEffect['approval'];
  chain: EvaluatedChain;
  contracts: readonly DelegationContract[];
  operation: string;
  message: Json;
  budgets: OpenBudgetRequest[];
  /** Upstream heads bound beside the local fence (separate stores). */
  remote?: RemoteFenceEntry[];
  /** A follow-up turn's message id: the delegatee's task is shared, so the turn's result is told apart by it. */
  followUp?: string;
  /** Builds the records this admission commits besides the decision (the first turn's attempt and input). */
  records: (effect: Effect, fence: ControlBoundaryRef[]) => { attempt: Attempt; records: SealedRecord<Record<string, unknown>>[] };
}

interface Effect {
  effect_id: string;
  reservation_id: string;
}

/**
 * What a first turn asks for, whatever its entry point (issue #24 item 4: one
 * request value, not a positional list): a send, an attempt resumed on
 * another delegatee (RW-003 §11.4), an effect a human approved, an MCP call.
 */
export interface FirstTurnRequest {
  caller: Pick<Caller, 'id'> & { contextId?: string };
  /** An A2A delegatee as resolved, or any protocol's site. */
  target: ResolvedDelegatee | Site;
  authority: FirstAuthority;
  message: Json;
  operation: string;
  /** A resumed attempt's references to the checkpoint and the attempt it replaces. */
  resumed?: Pick<AttemptBody, 'resumed_from' | 'reassigned_from'>;
  approved?: ApprovedEffect;
}

/** The first turn of a new task: a new attempt (Baton's task id) under freshly minted authority. */
export async function admitFirstTurn(deps: PathDeps, req: FirstTurnRequest): Promise<AdmittedTurn> {
  const site = 'delegateeId' in req.target ? req.target : a2aSite(req.target);
  try {
    return await admitFirst(deps, req, site, req.authority);
  } catch (err) {
    // Two first requests under a new upstream leaf both minted its child; the loser's node conflicts
    // (invalid_request) — or, where its plan took the leaf for new and the winner's stream head is there by its
    // fence check, its fence is stale (context_invalidated; PostgreSQL, whose writers run side by side). Its
    // admission stored nothing: prepare again on the winner's child and admit once more (issue #16). Only when
    // the winner's child is stored, and only once: the new admission re-checks every fence itself.
    const raced = isBatonError(err, 'invalid_request') || isBatonError(err, 'context_invalidated');
    const again = raced && req.authority.retryImport ? await req.authority.retryImport() : undefined;
    if (!again) throw err;
    return admitFirst(deps, req, site, again);
  }
}

export type FirstAuthority = {
  contracts: readonly DelegationContract[];
  budgets: OpenBudgetRequest[];
  imported?: readonly DelegationContract[];
  reevaluate: (op?: ReturnType<PathDeps['authority']['operation']>) => Promise<EvaluatedChain>;
  retryImport?: () => Promise<FirstAuthority | undefined>;
};

async function admitFirst(deps: PathDeps, req: FirstTurnRequest, site: Site, authority: FirstAuthority): Promise<AdmittedTurn> {
  const { caller, message, operation, resumed, approved } = req;
  const chain = await authority.reevaluate(deps.authority.operation(operation, 'proposal'));
  const attemptId = approved?.attemptId ?? deps.ids.next('att');
  // Baton names the remote context itself: a task whose reply was lost can still be found by it (DESIGN).
  const remoteContext = deps.ids.next('ctx');
  const input = taskInput(attemptId, message, deps);
  const seal = (effect: Effect, fence: ControlBoundaryRef[]): Attempt =>
    sealRecord<AttemptBody>(
      {
        type: 'execution_attempt',
        issuedBy: deps.gatewayActor,
        lifecycle: 'active',
        body: {
          attempt_id: attemptId,
          space_id: deps.spaceId,
          delegatee_id: site.delegateeId,
          delegation_ref: refOf(chain.leaf),
          root_ref: refOf(authority.contracts[0]!),
          caller_id: caller.id,
          ...effect,
          fence_set: fence,
          idempotency_key: effect.effect_id,
          remote: {
            ...{}, ...site.remote,
            context_id: remoteContext,
            ...(typeof message.messageId === 'string' ? { message_id: message.messageId } : {}),
          },
          context_id: approved?.contextId ?? caller.contextId ?? deps.ids.next('ctx'),
          state: 'dispatching',
          input_ref: refOf(input),
          ...site.attemptFields,
          ...resumed,
          ...(approved ? { approval: approved.approval } : {}),
        },
      },
      // The attempt's record id is its attempt id, so Baton's task id names the record.
      { ids: { next: (p) => (p === 'rev' ? deps.ids.next('rev') : attemptId) }, clock: deps.clock },
    );
  const plan: Plan = {
    attemptId,
    chain,
    contracts: authority.contracts,
    operation,
    message,
    budgets: authority.budgets,
    records: (effect, fence) => {
      const attempt = seal(effect, fence);
      // Separate stores: the upstream's ancestors are kept as records so a later turn can reload the chain.
      const imported = (authority.imported ?? []) as unknown as SealedRecord<Record<string, unknown>>[];
      return { attempt, records: [...imported, input, attempt, ...(approved?.records ?? [])] };
    },
    ...(approved ? { pinnedFence: approved.pinnedFence, approval: approved.approval } : {}),
  };
  return admitPlan(deps, site, plan);
}

/**
 * A follow-up turn on an interrupted task (INPUT_REQUIRED, AUTH_REQUIRED):
 * the same Baton task and contracts, re-evaluated now, and a new admitted
 * effect with its own reservation. The attempt itself is revised only by
 * this turn's verdict, so two turns racing never conflict before dispatch.
 */
export interface FollowUpRequest {
  target: ResolvedDelegatee;
  /** The task's attempt: the turn is admitted on it, under its stored chain re-evaluated now. */
  prior: Attempt;
  contracts: readonly DelegationContract[];
  chain: EvaluatedChain;
  message: Json;
  operation: string;
}

export async function admitFollowUp(deps: PathDeps, req: FollowUpRequest): Promise<AdmittedTurn> {
  const { target: resolved, prior, contracts, chain, message, operation } = req;
  const input = taskInput(prior.body.attempt_id, message, deps);
  return admitPlan(deps, a2aSite(resolved), {
    attemptId: prior.body.attempt_id,
    chain,
    contracts,
    operation,
    message,
    budgets: [],
    ...(typeof message.messageId === 'string' ? { followUp: message.messageId } : {}),
    records: () => ({ attempt: prior, records: [input] }),
  });
}

async function admitPlan(deps: PathDeps, site: Site, plan: Plan): Promise<AdmittedTurn> {
  const effect: Effect = { effect_id: deps.ids.next('eff'), reservation_id: deps.ids.next('res') };
  // Separate stores (issue #16): the upstream's streams are fenced through its signed
  // statement, fetched now, immediately before transmission (RW-003 §1.2); ours atomically below.
  const split = deps.federation?.split(plan.contracts);
  const scopes = split ? split.local : (plan.chain.fenceScopes as ControlScopeRef[]);
  let remote: RemoteFenceEntry[] = [];
  try {
    remote = split ? await deps.federation!.remoteFence(plan.contracts, split) : [];
  } catch (err) {
    await signalRefusal(deps, plan, err);
    throw err;
  }
  plan.remote = remote;
  const preFence = pinned([...(await deps.store.control.fenceSet(scopes))], plan.pinnedFence);
  // The plan (issue #24 item 1): the new nodes' heads are known now, so the fence set, the decision, the attempt
  // and its started event are built here, outside the transaction, which only checks and writes them.
  const now = deps.clock.now();
  const at = utc(now);
  // The nodes open at the admission's instant: one `at` for the whole transaction lets it carry its root's
  // retained count forward to the admission's instead of counting again (ledger/open.ts retainedIn).
  const budgets = plan.budgets.map((b) => ({ ...{}, ...b, at }));
  const opens = planOpens(budgets, preFence, deps.ids, await placementsOf(deps, budgets, preFence));
  const fence = opens.fence_set;
  const { attempt, records } = plan.records(effect, fence);
  const admission: AdmissionRequest = {
    ...{}, ...effect,
    node_id: plan.chain.leaf.record_id,
    kind: 'reserve',
    amounts: site.amounts ?? { [INVOCATIONS]: 1n },
    fence_set: fence,
    scopes: scopes.filter((s) => s.scope_kind !== 'delegation'),
    decision: decisionOf(deps, plan, effect, fence, at),
    attempt_scope: { space_id: deps.spaceId, scope_kind: 'attempt', scope_id: plan.attemptId },
    actor_ref: deps.gatewayActor,
    at,
    records,
    events: [startedEvent(deps, attempt, effect, fence)],
    follow: {
      attempt_id: plan.attemptId,
      lease_owner: deps.node,
      lease_until: utc(new Date(now.getTime() + (site.leaseMs ?? deps.follow.leaseMs))),
      deadline: utc(new Date(now.getTime() + deps.follow.maxFollowMs)),
      gateway_id: deps.gatewayActor.object_id,
    },
  };
  let receipt: AdmissionReceipt;
  try {
    receipt = await deps.store.ledger.admitTask({ budgets: opens.budgets, admission });
  } catch (err) {
    await signalRefusal(deps, plan, err);
    throw err;
  }
  await deps.events.emit({ type: 'admitted', delegatee: site.delegateeId, operation: plan.operation });
  return {
    attempt,
    ...effect,
    fence_set: fence,
    scopes,
    ...(receipt.status === 'held' && !receipt.replayed ? { reserved: { amounts: receipt.amounts } } : {}),
    ...(remote.length > 0 ? { remote_fence: { subject: plan.contracts[split!.upstreamLeaf]!.record_id, entries: remote } } : {}),
    target: site.target,
    contracts: plan.contracts,
    ...(attempt.body.remote.task_id ? { remoteTaskId: attempt.body.remote.task_id } : {}),
    ...(plan.followUp ? { followUp: { messageId: plan.followUp, delivered: false } } : {}),
  };
}

/** Where the existing parents of the nodes a plan opens sit (read only for chains that extend stored nodes). */
async function placementsOf(deps: PathDeps, budgets: readonly OpenBudgetRequest[], fence: readonly ControlBoundaryRef[]): Promise<Map<string, Placement>> {
  const out = new Map<string, Placement>();
  for (const id of unplacedParents(budgets, fence)) {
    const node = await deps.store.ledger.node(id);
    if (node) out.set(id, { root_id: node.root_id, depth: node.depth });
  }
  return out;
}

/**
 * The approved heads replace today's for the same streams: the admission
 * transaction then refuses (stale fence) if any of them moved since the
 * approver saw them (RW-003 §1.2).
 */
function pinned(now: ControlBoundaryRef[], pin: readonly ControlBoundaryRef[] | undefined): ControlBoundaryRef[] {
  if (!pin) return now;
  const key = (b: ControlBoundaryRef) => `${b.project_id}\u0000${b.branch_id}`;
  const byStream = new Map(pin.map((b) => [key(b), b]));
  return [...now.filter((b) => !byStream.has(key(b))), ...pin];
}

function decisionOf(deps: PathDeps, plan: Plan, effect: Effect, fence: ControlBoundaryRef[], at: string) {
  return sealRecord(
    {
      type: 'permission_decision',
      issuedBy: deps.gatewayActor,
      lifecycle: 'recorded',
      body: {
        decision: 'allow',
        ...effect,
        attempt_id: plan.attemptId,
        operation: plan.operation,
        delegation_ref: refOf(plan.chain.leaf),
        fence_set: fence,
        // Remote fence entries beside the local streams: the upstream heads this effect was admitted under.
        ...(plan.remote && plan.remote.length > 0 ? { remote_fence_set: plan.remote as unknown as JsonValue } : {}),
        evaluated_at: at,
        // A follow-up turn's own message: the task is shared, so its history tells this effect's result apart (issue #25 item 2).
        ...(plan.followUp ? { follow_up: { message_id: plan.followUp } } : {}),
        // RW-003 §1.1: allow is not an AuthorityDecision; where a human gate applies, the exact one is bound here.
        ...(plan.approval ? { authority_decision_ref: plan.approval.decision_ref, approval_request_ref: plan.approval.request_ref } : {}),
      },
    },
    deps,
  );
}

function startedEvent(deps: PathDeps, attempt: Attempt, effect: Effect, fence: ControlBoundaryRef[]): ControlEventInput {
  return {
    event_type: 'rw003.execution.started',
    control_scope_ref: { space_id: deps.spaceId, scope_kind: 'attempt', scope_id: attempt.body.attempt_id },
    actor_ref: deps.gatewayActor,
    produced_records: [refOf(attempt)],
    fence_set: fence,
    idempotency_key: `started:${effect.effect_id}`,
  };
}

/** A refusal for budget or a stale fence is a breaker signal (RW-003 §7.3). */
async function signalRefusal(deps: PathDeps, plan: Plan, err: unknown): Promise<void> {
  const leaf = plan.chain.leaf;
  const root = leaf.body.lineage.kind === 'child' ? leaf.body.lineage.root_ref.object_id : leaf.record_id;
  const failures = isBatonError(err, 'limit_exceeded') ? (err.details.failures as Array<{ node_id?: string }> | undefined) : undefined;
  if (failures) await deps.events.emit({ type: 'signal', signal: { kind: 'refused', reason: 'budget', delegation: leaf.record_id, root, ...(failures[0]?.node_id ? { exhausted: failures[0].node_id } : {}) } });
  // Expiry is the delegation running its course, not a stale fence: no breaker signal.
  if (isBatonError(err, 'context_invalidated') && err.details.reason !== 'expired') await deps.events.emit({ type: 'signal', signal: { kind: 'refused', reason: 'stale', delegation: leaf.record_id, root } });
}
