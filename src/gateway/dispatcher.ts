/**
 * The request path's entry points (DESIGN "The request path is one durable
 * state machine per attempt"). Every send runs the same named steps:
 *
 *   validate → (the admission table) → forward → follow → verify → present
 *
 * The steps up to admission — resolveTarget, the gate, the task's or a new
 * authority, admit, the integrator's webhook — are one table against the
 * variants that run them (first turn, follow-up, resumed attempt:
 * path/steps.ts ADMISSION), each step one module under src/gateway/path/.
 * The durable follower (follower.ts) re-enters at follow; an approved effect
 * is admitted by path/gate.ts. GetTask and ListTasks answer from Baton's own
 * view; the caller never sees a remote id. What a turn answers or relays is
 * path/present-turn.ts.
 */
import { TaskNotCancelableError } from '@a2a-js/sdk/errors';
import type { DelegationContract } from '../contracts/model.ts';
import type { Reservation } from '../ledger/types.ts';
import type { ActorRef, RevisionRef } from '../records/revision-ref.ts';
import { schemaRefFor } from '../records/schema-ref.ts';
import { attemptOf, type Attempt } from './attempts.ts';
import type { Caller } from './callers.ts';
import { Follower } from './follower.ts';
import type { AdmittedTurn } from './path/admit.ts';
import type { PathDeps } from './path/deps.ts';
import type { Acting } from '../gates/approvals.ts';
import { heldTask, heldTasks, withdrawHeld } from './path/gate.ts';
import { wireParams } from './path/forward.ts';
import { HeldTasks } from './path/held.ts';
import { presentAttempt } from './path/present-attempt.ts';
import { answerOf, pendingTask, relayTurn } from './path/present-turn.ts';
import { runAdmission } from './path/steps.ts';
import { subscribeTask } from './path/subscribe.ts';
import { complete, completeQuietly, noteRemoteTask, send } from './path/run-turn.ts';
import type { Json } from './path/turn.ts';
import { validateSend, type ValidSend } from './path/validate.ts';
import { withConsumptionReceipt } from './present.ts';
import { Reconciler } from './reconciler.ts';
import { Stopper, type StopCause } from './stopper.ts';
import { inSpan, turnIds } from '../telemetry/tracing.ts';

export type { Attempt } from './attempts.ts';
export type { PushHooks } from './path/deps.ts';
export { TaskNotFound } from './task-not-found.ts';

export class Dispatcher {
  readonly follower: Follower;
  readonly stopper: Stopper;
  readonly reconciler: Reconciler;
  /** Tasks held at the human gate, once decided (src/gateway/path/held.ts). */
  private readonly held: HeldTasks;
  /** Turns followed after their caller was answered (returnImmediately), awaited on shutdown. */
  private readonly background = new Set<Promise<unknown>>();

  constructor(readonly deps: PathDeps) {
    this.follower = new Follower(deps);
    this.stopper = new Stopper(deps);
    this.reconciler = new Reconciler(deps);
    this.held = new HeldTasks(deps, (p) => this.inBackground(p));
  }

  /** SendMessage: the wire `SendMessageResponse` (`{task}` or `{message}`) with Baton's ids. */
  async send(caller: Caller, delegateeId: string, raw: Json): Promise<Json> {
    const req = validateSend(raw);
    const turn = await this.admitTurn(caller, delegateeId, req, 'a2a.SendMessage');
    if ('held' in turn) return { task: turn.held };
    const streaming = !req.returnImmediately && turn.target.streaming;
    const sent = await send(this.deps, turn, wireParams(this.deps, turn, req.params, streaming), streaming);
    const until = this.deps.clock.now().getTime() + this.deps.follow.blockingWaitMs;
    if (req.returnImmediately && sent.kind === 'reply' && sent.result.task !== undefined) {
      // The caller will come back for it: the task the delegatee named is recorded before answering.
      turn.remoteTaskId ??= (sent.result.task as { id?: string }).id;
      await noteRemoteTask(this.deps, turn);
      this.inBackground(completeQuietly(this.deps, turn, sent, until));
      return { task: pendingTask(turn, sent.result.task as Json) };
    }
    return answerOf(turn, await completeQuietly(this.deps, turn, sent, until), req.historyLength);
  }

  /** SendStreamingMessage: each event as it arrives, the terminal or interrupted one only after its verdict. */
  async *stream(caller: Caller, delegateeId: string, raw: Json): AsyncGenerator<Json> {
    const req = validateSend(raw);
    const turn = await this.admitTurn(caller, delegateeId, req, 'a2a.SendStreamingMessage');
    if ('held' in turn) {
      yield { task: turn.held };
      return;
    }
    const sent = await send(this.deps, turn, wireParams(this.deps, turn, req.params, true), true);
    yield* relayTurn(turn, complete(this.deps, turn, sent, this.deps.clock.now().getTime() + this.deps.follow.blockingWaitMs), (p) => this.inBackground(p));
  }

  /** SubscribeToTask: the task followed through its turns to a terminal state, with Baton's ids (path/subscribe.ts). */
  async *resubscribe(caller: Caller, attemptId: string, callerLeft?: AbortSignal): AsyncGenerator<Json> {
    const attempt = await this.attemptFor(caller, attemptId);
    if (!attempt) {
      yield { task: await heldTask(this.deps, caller, attemptId) };
      return;
    }
    yield* subscribeTask(this.deps, attempt, (p) => this.inBackground(p), callerLeft);
  }

  /** GetTask: Baton's recorded view (never a live remote call), `historyLength` honoured. */
  async getTask(caller: Pick<Caller, 'id'>, attemptId: string, historyLength?: number): Promise<Json> {
    const attempt = await this.attemptFor(caller, attemptId);
    if (!attempt) return heldTask(this.deps, caller, attemptId);
    // An upstream Baton reads its verdict back here: a task under its imported chain carries a signed consumption receipt (issue #16).
    return withConsumptionReceipt(presentAttempt(attempt.body, historyLength), await this.deps.federation?.consumptionReceipt(attempt.body));
  }

  /** ListTasks: this caller's tasks at this delegatee, newest first, from Baton's view. */
  async listTasks(caller: Caller, delegateeId: string | undefined, opts: { pageSize?: number; pageToken?: string; contextId?: string }): Promise<Json> {
    const pageSize = Math.min(Math.max(opts.pageSize ?? 50, 1), 100);
    const tasks: Json[] = [];
    let cursor = opts.pageToken || undefined;
    // Tasks held at the human gate have no attempt yet: they lead the first page.
    if (!cursor) tasks.push(...(await heldTasks(this.deps, caller, delegateeId, opts.contextId)).slice(0, pageSize));
    // Bounded scan: at most 20 store pages per call, then hand back a cursor.
    for (let pages = 0; pages < 20 && tasks.length < pageSize; pages++) {
      const page = await this.deps.store.listCurrent(ATTEMPT_SCHEMA, { limit: 200, ...(cursor ? { cursor } : {}) });
      for (const rec of page.records) {
        const a = attemptOf(rec)!;
        if (a.body.caller_id !== caller.id || (delegateeId !== undefined && a.body.delegatee_id !== delegateeId)) continue;
        if (opts.contextId && a.body.context_id !== opts.contextId) continue;
        // The task view is stored apart (records/detached.ts): attach it, or learn it was purged.
        if (tasks.length < pageSize) tasks.push(presentAttempt((await this.deps.attempts.withContent(a)).body, 0));
      }
      cursor = page.cursor;
      if (!cursor) break;
    }
    return { tasks, nextPageToken: cursor ?? '', pageSize, totalSize: tasks.length };
  }

  /**
   * CancelTask: no budget charge — a safe stop must stay possible when the
   * budget is spent or the delegation revoked. The acknowledgement is only an
   * observation; the read-back decides (RW-003 §10.3).
   */
  async cancel(caller: Caller, attemptId: string): Promise<Json> {
    const found = await this.attemptFor(caller, attemptId);
    if (!found) return withdrawHeld(this.deps, caller, attemptId);
    // A2A §7.4: a task in a terminal state is TaskNotCancelableError (-32002).
    if (found.body.state === 'closed') throw new TaskNotCancelableError('the task has ended and cannot be canceled');
    return presentAttempt((await this.stopper.stop(found, 'caller')).body);
  }

  /** The caller's own attempt (never another caller's: TaskNotFound semantics). */
  attemptFor(caller: Pick<Caller, 'id'>, attemptId: string): Promise<Attempt | undefined> {
    return this.deps.attempts.forCaller(caller.id, attemptId);
  }

  /** Asks the delegatee to notify Baton's own webhook about an open task (best effort: the follower polls anyway). */
  async subscribePush(attempt: Attempt): Promise<boolean> {
    const latest = await this.deps.attempts.latest(attempt);
    const taskId = latest.body.state === 'closed' ? undefined : await this.deps.attempts.remoteTaskId(latest);
    if (!this.deps.push || taskId === undefined) return false;
    const target = await this.deps.delegatees.resolve(latest.body.delegatee_id);
    if ((target.verification.card.capabilities as { pushNotifications?: boolean } | undefined)?.pushNotifications !== true) return false;
    await this.deps.remote.call(target.endpoint, 'CreateTaskPushNotificationConfig', { ...{}, ...this.deps.push.inbound(latest.record_id), taskId }, { headers: target.headers });
    return true;
  }

  /** A notification arrived (or a poll is due): continue the attempt's open turns now. */
  refresh(attemptId: string): Promise<void> {
    return this.follower.wake(attemptId);
  }

  /**
   * Starts the attempt that continues a checkpointed one on another
   * delegatee (RW-003 §11.4): same caller, the revised chain, a fresh fence
   * set, the exact stored input, and references to the checkpoint and the
   * attempt it replaces. Returns once the delegatee has the task; its
   * outcome is followed and verified as any other.
   */
  async startResumed(prior: Attempt, contracts: readonly DelegationContract[], delegateeId: string, input: Json, checkpoint: RevisionRef): Promise<Attempt> {
    const message: Json = { ...{}, ...input, messageId: this.deps.ids.next('msg') };
    const turn = await runAdmission(this.deps, { variant: 'resumed', callerId: prior.body.caller_id, delegateeId, operation: 'a2a.SendMessage', message, resumed: { prior, contracts, checkpoint } });
    // No gate step runs for a resumed attempt (path/steps.ts): it is admitted or refused, never held.
    if ('held' in turn) throw new Error('a resumed attempt was held at the gate');
    this.stopper.admitted(turn);
    const sent = await send(this.deps, turn, wireParams(this.deps, turn, { message }, false), false);
    this.inBackground(completeQuietly(this.deps, turn, sent, this.deps.clock.now().getTime() + this.deps.follow.blockingWaitMs));
    if (sent.kind === 'reply' && sent.result.task) turn.remoteTaskId ??= (sent.result.task as { id?: string }).id;
    await noteRemoteTask(this.deps, turn);
    return this.deps.attempts.latest(turn.attempt);
  }

  stop(attempt: Attempt, cause: StopCause, detail?: string): Promise<Attempt> {
    return this.stopper.stop(attempt, cause, detail);
  }

  sweepRevocations(): Promise<number> {
    return this.stopper.sweep();
  }

  /** The attempt a reservation was admitted for, while it is not closed. */
  async openAttemptOf(r: Pick<Reservation, 'decision_ref'>): Promise<Attempt | undefined> {
    const attempt = await this.deps.attempts.ofDecision(r.decision_ref);
    return attempt && attempt.body.state !== 'closed' ? attempt : undefined;
  }

  reconcile(reservationId: string) {
    return this.reconciler.reconcile(reservationId);
  }

  resolveManually(reservationId: string, as: 'not_dispatched' | 'consumed', note: string, operator: ActorRef): Promise<string> {
    return this.reconciler.resolveManually(reservationId, as, note, operator);
  }

  /** Forwards an effect a named human authority approved (src/gateway/path/held.ts). */
  resumeApproved(taskId: string): Promise<Attempt> {
    return this.held.resumeApproved(taskId);
  }

  /** Forwards every approved request not yet admitted, on each node's sweep; returns how many were admitted. */
  sweepApprovals(onError: (taskId: string, err: unknown) => void): Promise<number> {
    return this.held.sweepApprovals((taskId) => this.resumeApproved(taskId), onError);
  }

  /** RW-003 §6 T4: the reviewer's decision on a verified effect. */
  review(taskId: string, decision: 'approve' | 'deny', note: string, by: Acting): Promise<Attempt> {
    return this.held.review(taskId, decision, note, by);
  }

  /**
   * Stops following, for shutdown: waits up to `deadlineMs` for the turns
   * followed here; what is not over by then keeps its work-queue row, and
   * another node (or the next start) takes it over once the lease lapses.
   */
  async drain(deadlineMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((r) => (timer = setTimeout(r, deadlineMs)));
    await Promise.race([Promise.allSettled([...this.background, this.follower.stop()]), deadline]);
    clearTimeout(timer);
  }

  /** Steps 2–4 of a send in one span (`baton.admit`), named by the Baton ids admission issued. */
  private admitTurn(caller: Caller, delegateeId: string, req: ValidSend, operation: string): Promise<AdmittedTurn | { held: Json }> {
    return inSpan('baton.admit', { 'baton.delegatee': delegateeId, 'baton.operation': operation }, async (span) => {
      const turn = await this.admitTurnUntraced(caller, delegateeId, req, operation);
      if (!('held' in turn)) span.setAttributes(turnIds(turn));
      return turn;
    });
  }

  /** Steps 2–4 of a send: validated request in, admitted turn out (first turn or follow-up), by the path's table (path/steps.ts). */
  private async admitTurnUntraced(caller: Caller, delegateeId: string, req: ValidSend, operation: string): Promise<AdmittedTurn | { held: Json }> {
    const turn = await runAdmission(this.deps, { variant: req.taskId ? 'followUp' : 'first', callerId: caller.id, sender: caller, delegateeId, operation, message: req.message, send: req });
    if (!('held' in turn)) this.stopper.admitted(turn);
    return turn;
  }

  private inBackground(p: Promise<unknown>): void {
    const tracked = p.catch(() => undefined).finally(() => this.background.delete(tracked));
    this.background.add(tracked);
  }
}


const ATTEMPT_SCHEMA = schemaRefFor('execution_attempt');
