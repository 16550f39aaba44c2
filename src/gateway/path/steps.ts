/**
 * The request path as a table (issue #24 item 4; the way node-oidc-provider
 * lists its authorization checks): every step up to admission once, with the
 * variants it runs in, in the order they run. A request is one value
 * ({@link PathRequest}) that each step reads and fills in; each step has one
 * signature, `(deps, request)`, and does its work in its own module. What
 * follows admission is shared by every variant (path/run-turn.ts):
 *
 *   forward → follow → verify → present (an answer, or a relayed stream)
 *
 * A first turn of a send or a stream, a follow-up on an interrupted task
 * (INPUT_REQUIRED, AUTH_REQUIRED) and an attempt resumed on another delegatee
 * (RW-003 §11.4) run the table below. An effect a human approved is admitted
 * by path/gate.ts admitApproved (its checks are the approval's), and a turn
 * another node began is continued by the durable follower (follower.ts:
 * rebuildTurn, then follow → verify).
 */
import type { EvaluatedChain } from '../../contracts/admission.ts';
import type { DelegationContract } from '../../contracts/model.ts';
import { BatonError } from '../../errors.ts';
import type { GatedTier } from '../../gates/policy.ts';
import type { RevisionRef } from '../../records/revision-ref.ts';
import type { JsonValue } from '../../records/strict-json.ts';
import type { Attempt } from '../attempts.ts';
import type { PreparedAuthority } from '../authority.ts';
import type { Caller } from '../callers.ts';
import type { ResolvedDelegatee } from '../delegatees.ts';
import { TaskNotFound } from '../task-not-found.ts';
import { admitFirstTurn, admitFollowUp, type AdmittedTurn, type FirstAuthority } from './admit.ts';
import { bindAuthority } from './bind-authority.ts';
import type { PathDeps } from './deps.ts';
import { gateTier, holdForApproval } from './gate.ts';
import { resolveTarget } from './resolve-target.ts';
import type { Json } from './turn.ts';
import type { ValidSend } from './validate.ts';
import { verdictReleased } from './verify.ts';

export type Variant = 'first' | 'followUp' | 'resumed';

/** One request on its way to admission: what the steps read, and what they fill in. */
export interface PathRequest {
  variant: Variant;
  /** Who the task is for. */
  callerId: string;
  /** The authenticated caller of a send or stream (a resumed attempt has only its caller's id). */
  sender?: Caller;
  delegateeId: string;
  operation: string;
  message: Json;
  /** A send or stream, validated (path/validate.ts). */
  send?: ValidSend;
  /** A resumed attempt: the one it replaces, the revised chain, the checkpoint (RW-003 §11.4). */
  resumed?: { prior: Attempt; contracts: readonly DelegationContract[]; checkpoint: RevisionRef };
  resolved?: ResolvedDelegatee;
  /** The gate tier a first turn must clear, if any. */
  tier?: GatedTier;
  /** A follow-up's task. */
  prior?: Attempt;
  authority?: FirstAuthority;
  /** A first turn's authority as bindAuthority minted it (what a hold at the gate records). */
  bound?: PreparedAuthority;
  /** A follow-up's stored chain, re-evaluated now. */
  followUp?: { contracts: readonly DelegationContract[]; chain: EvaluatedChain };
  /** The request ends held at the human gate: the task its caller gets. */
  held?: Json;
  turn?: AdmittedTurn;
}

type Step = (deps: PathDeps, r: PathRequest) => Promise<void>;
type Row = readonly [name: string, step: Step, ...runsIn: Variant[]];

/** Steps 2–4 of every first turn, follow-up and resumed attempt, in order. */
export const ADMISSION: readonly Row[] = [
  // step             runs                         in these variants
  ['resolveTarget',     resolveStep,                 'first', 'followUp', 'resumed'],
  ['checkPush',         checkPush,                   'first', 'followUp'],
  ['gate',              gate,                        'first', 'followUp'],
  ['task',              task,                                 'followUp'],
  ['registerPush',      registerPushOnTask,                   'followUp'],
  ['resumeAuthority',   resumeAuthority,                      'followUp'],
  ['bindAuthority',     bind,                        'first'],
  ['revisedAuthority',  revisedAuthority,                                 'resumed'],
  ['hold',              hold,                        'first'],
  ['admit',             admit,                       'first', 'followUp', 'resumed'],
  ['registerPush',      registerPushOnNewTask,       'first'],
];

/** Runs the table for `r` until it is admitted (r.turn) or held at the gate (r.held). */
export async function runAdmission(deps: PathDeps, r: PathRequest): Promise<AdmittedTurn | { held: Json }> {
  for (const [, step, ...runsIn] of ADMISSION) {
    if (!runsIn.includes(r.variant)) continue;
    await step(deps, r);
    if (r.held !== undefined) return { held: r.held };
  }
  return r.turn!;
}

/** The authenticated caller of a send: gates, presets and upstream chains depend on it. */
function sender(r: PathRequest): Caller {
  if (!r.sender) throw new Error(`a step of variant ${r.variant} needs the sending caller`);
  return r.sender;
}

const pushOf = (r: PathRequest): JsonValue | undefined => {
  const push = (r.send?.params.configuration as Json | undefined)?.taskPushNotificationConfig;
  return push === null ? undefined : push;
};

/** Step 2: the delegatee, its verified card and endpoint (path/resolve-target.ts). */
async function resolveStep(deps: PathDeps, r: PathRequest): Promise<void> {
  r.resolved = await resolveTarget(deps, r.delegateeId);
}

/** An integrator's webhook is checked before anything is admitted (src/push). */
async function checkPush(deps: PathDeps, r: PathRequest): Promise<void> {
  const push = pushOf(r);
  if (push === undefined) return;
  if (!deps.push) throw new BatonError('unsupported', 'push notifications are not enabled on this gateway');
  deps.push.validate(push);
}

/** The human gate's tier for this caller and delegatee (path/gate.ts). */
async function gate(deps: PathDeps, r: PathRequest): Promise<void> {
  const tier = gateTier(deps, sender(r), r.resolved!.config.id);
  // A follow-up is a new payload the approval did not cover, on a remote task that cannot be parked: it cannot wait here.
  if (tier && r.variant === 'followUp') throw new BatonError('interaction_required', 'this delegatee needs a named human authority for each effect; send a new task (without taskId) to request approval', { tier });
  if (tier) r.tier = tier;
}

/** A follow-up's task: the caller's own, at this delegatee, still able to take a message. */
async function task(deps: PathDeps, r: PathRequest): Promise<void> {
  const taskId = r.send!.taskId!;
  const prior = await deps.attempts.forCaller(r.callerId, taskId);
  if (!prior || prior.body.delegatee_id !== r.resolved!.config.id) throw new TaskNotFound(taskId);
  if (prior.body.state === 'closed' || (await deps.attempts.remoteTaskId(prior)) === undefined) throw new BatonError('unsupported', 'this task cannot take another message', { state: prior.body.state });
  r.prior = prior;
}

/** On an existing task the webhook is registered first: a refused config refuses only this turn. */
async function registerPushOnTask(deps: PathDeps, r: PathRequest): Promise<void> {
  const push = pushOf(r);
  if (push !== undefined) await deps.push!.register(sender(r), r.prior!, push);
}

/** A follow-up runs under its task's stored chain, re-evaluated now (ADR-0014: at admission, not only at mint). */
async function resumeAuthority(deps: PathDeps, r: PathRequest): Promise<void> {
  const authority = await deps.authority.resume(sender(r), r.prior!.body.delegation_ref);
  r.followUp = { contracts: authority.contracts, chain: await authority.reevaluate(deps.authority.operation(r.operation, 'proposal')) };
}

/** Step 3: a first turn's authority, minted (path/bind-authority.ts). */
async function bind(deps: PathDeps, r: PathRequest): Promise<void> {
  r.bound = await bindAuthority(deps, sender(r), r.resolved!, r.message);
  r.authority = r.bound;
}

/** A resumed attempt runs under the revised chain it was given, evaluated now. */
async function revisedAuthority(deps: PathDeps, r: PathRequest): Promise<void> {
  const contracts = r.resumed!.contracts;
  const chain = await deps.authority.evaluate(contracts, deps.authority.operation(r.operation, 'proposal'));
  r.authority = { contracts, budgets: [], reevaluate: async () => chain };
}

/** A gated first turn is held for a named human authority instead of admitted (path/gate.ts). */
async function hold(deps: PathDeps, r: PathRequest): Promise<void> {
  if (r.tier) r.held = await holdForApproval(deps, deps.gates!, r.tier, sender(r), r.resolved!, r.bound!, r.send!, r.operation);
}

/** Step 4: the admission (path/admit.ts). */
async function admit(deps: PathDeps, r: PathRequest): Promise<void> {
  if (r.variant === 'followUp') {
    r.turn = await admitFollowUp(deps, { target: r.resolved!, prior: r.prior!, ...r.followUp!, message: r.message, operation: r.operation });
    return;
  }
  const contextId = typeof r.message.contextId === 'string' ? r.message.contextId : undefined;
  const resumed = r.resumed && { resumed_from: r.resumed.checkpoint, reassigned_from: r.resumed.prior.record_id };
  r.turn = await admitFirstTurn(deps, {
    caller: { id: r.callerId, ...(contextId && !resumed ? { contextId } : {}) },
    target: r.resolved!,
    authority: r.authority!,
    message: r.message,
    operation: r.operation,
    ...(resumed ? { resumed } : {}),
  });
}

/** On a new task the webhook is registered once it exists; refused, the turn is released before anything is sent. */
async function registerPushOnNewTask(deps: PathDeps, r: PathRequest): Promise<void> {
  const push = pushOf(r);
  if (push === undefined) return;
  try {
    await deps.push!.register(sender(r), r.turn!.attempt, push);
  } catch (err) {
    await verdictReleased(deps, r.turn!, 'the integrator webhook was refused');
    throw err;
  }
}
