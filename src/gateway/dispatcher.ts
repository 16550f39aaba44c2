/**
 * The main path (DESIGN §3–§6): authority → fenced admission → forward →
 * read-back → projected outcome. Works on A2A v1.0 wire JSON so unknown
 * fields survive forwarding (RW-003 §3); the SDK edge converts types.
 * Every reply carries Baton's ids: the caller never sees a remote task id.
 */
import type { Observation } from '../attempts/outcome.ts';
import { fingerprint, isInterrupted, isTerminal, TaskView } from '../attempts/task-view.ts';
import type { EvaluatedChain } from '../contracts/admission.ts';
import { parseContract, type DelegationContract } from '../contracts/model.ts';
import type { ControlEventInput } from '../control/event.ts';
import type { ControlBoundaryRef } from '../control/fence.ts';
import type { ControlScopeRef } from '../control/scope.ts';
import { BatonError, invalidRequest, isBatonError } from '../errors.ts';
import { refOf, sealRecord, type SealedRecord } from '../records/envelope.ts';
import { schemaRefFor } from '../records/schema-ref.ts';
import type { IdSource } from '../records/ids.ts';
import type { ActorRef, RevisionRef } from '../records/revision-ref.ts';
import type { JsonValue } from '../records/strict-json.ts';
import { utc, type Clock } from '../records/time.ts';
import type { Store } from '../store/port.ts';
import type { Reservation } from '../ledger/types.ts';
import type { AttemptBody } from './attempt-record.ts';
import type { DelegationAuthority } from './authority.ts';
import type { Caller } from './callers.ts';
import type { DelegateeRegistry, ResolvedDelegatee } from './delegatees.ts';
import { CONTRACT_EXTENSION, presentMessage, presentTask, withIds } from './present.ts';
import { parseSse } from './sse.ts';
import { chainOf, lostOrRefused, mergeArtifact, parseEnvelope, placeholderTask, stateOf, textOf, toCallerError } from './wire.ts';
import type { ProxyCards } from './proxy-card.ts';
import { INVOCATIONS } from './preset.ts';
import { RemoteRpcError, type RemoteClient } from './remote.ts';
import { fencesCurrent, readBack, verifyAttempt } from './verifier.ts';
import { taskInput } from './task-input.ts';
import { RunningAttempts } from './propagation.ts';
import type { BreakerSignal } from '../control/breaker.ts';

type Json = { [key: string]: JsonValue };

/** What the dispatcher needs of push notifications (src/push), so the two stay decoupled. */
export interface PushHooks {
  /** Checks an integrator's webhook config before anything is admitted; throws on a bad one. */
  validate(config: JsonValue): void;
  /** Registers an integrator's webhook for a Baton task. */
  register(caller: Caller, attempt: Attempt, config: JsonValue): Promise<void>;
  /** Baton's own webhook the delegatee should notify about this task. */
  inbound(taskId: string): { id: string; url: string; token: string };
  /** Every verified outcome (an attempt's closing revision) and the read-back it agreed with. */
  closed(attempt: Attempt, verifiedTask?: JsonValue): void;
}

export interface DispatcherDeps {
  store: Store;
  cards: ProxyCards;
  authority: DelegationAuthority;
  delegatees: DelegateeRegistry;
  remote: RemoteClient;
  clock: Clock;
  ids: IdSource;
  gatewayActor: ActorRef;
  spaceId: string;
  push?: PushHooks;
  /** Hands what Baton cannot settle itself to the operator (src/operator/escalation.ts). */
  escalate?: (kind: 'cancel_unacknowledged' | 'effect_unverifiable', subject: { attempt_id?: string; delegation_id?: string }, reasons: string[]) => Promise<unknown>;
  /** Circuit-breaker signals (src/control/breaker.ts); the monitor decides what trips. */
  signal?: (s: BreakerSignal) => void;
}

export type Attempt = SealedRecord<AttemptBody>;

/** What observing and verifying an attempt needs of its delegatee. */
type Target = Pick<ResolvedDelegatee, 'endpoint' | 'headers'> & { config: Pick<ResolvedDelegatee['config'], 'acceptance'> };

export class Dispatcher {
  /** Attempts that may still be running, watched for revocation. */
  private readonly running = new RunningAttempts();

  constructor(private readonly deps: DispatcherDeps) {}

  /**
   * RW-003 §8: a revoked (or tripped, suspended) ancestor stops descendants.
   * One pass over running attempts: any whose fences no longer hold is asked
   * to stop, with revocation as its cause.
   */
  async sweepRevocations(): Promise<number> {
    return this.running.sweep(
      async (a) => !(await fencesCurrent(this.deps.store, a.body.fence_set, await this.scopesOf(a))),
      async (a) => {
        const { cause, detail, by } = await this.whyStale(a);
        await this.stop(a, cause, detail, { claimed: true });
        if (by) this.deps.signal?.({ kind: 'stopped', by, delegation: a.body.delegation_ref.object_id, detail });
      },
      async (a, err) =>
        void (await this.deps.escalate?.('cancel_unacknowledged', { attempt_id: a.record_id, delegation_id: a.body.delegation_ref.object_id }, [
          `stopping failed: ${err instanceof Error ? err.message : String(err)}`,
        ])),
    );
  }

  /** Where an attempt was sent, without re-verifying the card: for stopping and reading back what is already running. */
  private pinnedTarget(a: Attempt): Target {
    const config = this.deps.delegatees.configOf(a.body.delegatee_id);
    let headers: Record<string, string> = {};
    try {
      headers = this.deps.delegatees.credentialsOf(a.body.delegatee_id);
    } catch {
      // No credential in the environment any more: try without; the read-back decides.
    }
    return { endpoint: a.body.remote.endpoint, headers, config: { acceptance: config?.acceptance ?? {} } };
  }

  /** Which authority change made an attempt's fences stale, for its recorded cause. */
  private async whyStale(a: Attempt): Promise<{ cause: 'revocation' | 'breaker' | 'operator'; detail: string; by?: 'revocation' | 'policy' }> {
    for (const b of a.body.fence_set) {
      const h = await this.deps.store.control.streamHead(b);
      if (h && h.event_id !== b.event_id) {
        const cause = h.state === 'tripped' ? 'breaker' : h.state === 'revoked' || h.state === 'expired' || h.state === 'reassigning' ? 'revocation' : 'operator';
        const detail = `${b.branch_id} is now ${h.state} (position ${h.position})`;
        // A trip is already a breaker, and a reassignment is no revocation for cause; a policy or consent
        // change, or a revocation, is a trigger for one (RW-003 §7.3).
        const by = cause === 'breaker' ? undefined : /^(space|policy|consent):/.test(b.branch_id) ? 'policy' : h.state === 'revoked' ? 'revocation' : undefined;
        return { cause, detail, ...(by ? { by } : {}) };
      }
    }
    return { cause: 'revocation', detail: 'a fenced authority stream moved' };
  }

  /**
   * Attempts this process did not start — before a restart, by another
   * gateway on the same ledger, by a CLI reassignment — are found through
   * their unresolved reservations and watched too. Run at start and then
   * periodically; each reservation is looked at once.
   */
  async adoptOpenAttempts(limit = 10_000): Promise<number> {
    let n = 0;
    const unresolved = await this.deps.store.ledger.unresolved(limit);
    const current = new Set(unresolved.map((r) => r.reservation_id));
    for (const id of this.adopted) if (!current.has(id)) this.adopted.delete(id); // bounded by live work
    for (const r of unresolved) {
      if (this.adopted.has(r.reservation_id)) continue;
      this.adopted.add(r.reservation_id);
      const attempt = await this.openAttemptOf(r);
      if (attempt) {
        this.running.track(attempt);
        n++;
      }
    }
    return n;
  }

  /** The attempt a reservation was admitted for, while it is not closed. */
  async openAttemptOf(r: Pick<Reservation, 'decision_ref'>): Promise<Attempt | undefined> {
    const attempt = await this.attemptOfDecision(r.decision_ref.content_digest);
    return attempt && attempt.body.state !== 'closed' ? attempt : undefined;
  }

  /** Reservations already looked at by adoptOpenAttempts. */
  private readonly adopted = new Set<string>();

  private track(attempt: Attempt): void {
    this.running.track(attempt);
    this.adopted.add(attempt.body.reservation_id);
  }

  /**
   * Asks a running attempt to stop (ADR-0014: cancellation keeps its first
   * cause). The cause is recorded once; then CancelTask, whose answer is only
   * an observation, then a read-back that decides. No acknowledgement, or a
   * read-back that still shows the task running, escalates to the operator.
   */
  async stop(attempt: Attempt, cause: NonNullable<AttemptBody['cancel_cause']>['cause'], detail: string, opts: { claimed?: boolean } = {}): Promise<Attempt> {
    // One stop per attempt in this process: the sweep and an operator action must not both cancel and escalate.
    if (!opts.claimed && !this.running.claimStop(attempt.record_id)) return this.latestOf(attempt);
    let latest = await this.latestOf(attempt);
    if (latest.body.state === 'closed') return latest;
    if (!latest.body.cancel_cause) latest = await this.revise(latest, { cancel_cause: { cause, at: utc(this.deps.clock.now()), detail: detail.slice(0, 512) } });
    // Stopping must work exactly when the delegatee's card no longer would: use the endpoint the attempt was sent to.
    const target = this.pinnedTarget(latest);
    const reasons: string[] = [];
    if (latest.body.remote.task_id === undefined) {
      reasons.push('the delegatee never named its task; nothing to cancel or read back');
    } else {
      try {
        await this.deps.remote.call(target.endpoint, 'CancelTask', { id: latest.body.remote.task_id }, { headers: target.headers });
      } catch (err) {
        reasons.push(`CancelTask was not acknowledged: ${err instanceof Error ? err.message : String(err)}`);
      }
      const back = await readBack(this.deps.remote, target.endpoint, latest.body.remote.task_id, target.headers);
      if (back.kind === 'task') latest = await this.observe(latest, target, { kind: 'task', task: back.task, fingerprint: back.fingerprint });
      else reasons.push(`read-back after cancellation failed: ${back.reason}`);
      if (latest.body.state !== 'closed') reasons.push('the remote task is still running after cancellation');
    }
    if (reasons.length > 0) await this.deps.escalate?.('cancel_unacknowledged', { attempt_id: latest.record_id, delegation_id: latest.body.delegation_ref.object_id }, [`stop requested: ${cause}`, ...reasons]);
    return latest;
  }

  /** SendMessage: returns the wire `SendMessageResponse` (`{task}` or `{message}`) with Baton ids. */
  async send(caller: Caller, delegateeId: string, params: Json): Promise<Json> {
    const { attempt, target, forwarded } = await this.admitWithPush(caller, delegateeId, params, 'a2a.SendMessage');
    let result: JsonValue;
    try {
      result = await this.deps.remote.call(target.endpoint, 'SendMessage', forwarded, { headers: { ...target.headers, 'a2a-extensions': CONTRACT_EXTENSION } });
    } catch (err) {
      await this.observe(attempt, target, lostOrRefused(err));
      throw toCallerError(err);
    }
    const body = result as Json;
    if (body.task === undefined) {
      // A bare Message has no task to read back: its effect stays unknown (RW-003 §10.1).
      await this.observe(attempt, target, { kind: 'lost', reason: 'remote answered with a message, no task to read back' });
      return { message: presentMessage(body.message ?? null, attempt.body) };
    }
    const final = await this.observeTask(attempt, target, body.task);
    return { task: final };
  }

  /** SendStreamingMessage: relays each event as it arrives; the terminal one only after read-back. */
  async *stream(caller: Caller, delegateeId: string, params: Json): AsyncGenerator<Json> {
    const { attempt, target, forwarded } = await this.admitWithPush(caller, delegateeId, params, 'a2a.SendStreamingMessage');
    let res;
    try {
      res = await this.deps.remote.stream(target.endpoint, 'SendStreamingMessage', forwarded, { ...target.headers, 'a2a-extensions': CONTRACT_EXTENSION });
    } catch (err) {
      await this.observe(attempt, target, lostOrRefused(err));
      throw toCallerError(err);
    }
    yield* this.relay(attempt, target, res.body, { effect: true });
  }

  /**
   * SubscribeToTask: a read of an existing task's stream, relayed with
   * Baton's ids. A closed attempt answers with its recorded view; a broken
   * subscription says nothing about the effect, so it never marks it lost.
   */
  async *resubscribe(caller: Caller, attemptId: string): AsyncGenerator<Json> {
    const attempt = await this.attemptFor(caller, attemptId);
    if (!attempt) throw new TaskNotFound(attemptId);
    if (attempt.body.state === 'closed' || attempt.body.remote.task_id === undefined) {
      yield { task: await this.getTask(caller, attemptId) };
      return;
    }
    const target = await this.deps.delegatees.resolve(attempt.body.delegatee_id);
    let res;
    try {
      res = await this.deps.remote.stream(target.endpoint, 'SubscribeToTask', { id: attempt.body.remote.task_id }, target.headers);
    } catch (err) {
      throw toCallerError(err);
    }
    yield* this.relay(attempt, target, res.body, { effect: false });
  }

  /** Relays one remote SSE stream event by event; the terminal event only after read-back. */
  private async *relay(start: Attempt, target: ResolvedDelegatee, body: AsyncIterable<Uint8Array>, opts: { effect: boolean }): AsyncGenerator<Json> {
    let attempt = start;
    const view: Json = {};
    let ended = false;
    try {
      for await (const ev of parseSse(body)) {
        const env = parseEnvelope(ev.data);
        if (ev.event === 'error' || env.error !== undefined) throw new RemoteRpcError(-32603, 'delegatee stream failed');
        const result = env.result as Json;
        if (result.task) {
          Object.assign(view, result.task as Json);
          attempt = await this.ensureRemoteIds(attempt, view);
          if (isTerminal(stateOf(view))) {
            ended = true;
            yield { task: await this.observeTask(attempt, target, view) };
            return;
          }
          yield { task: presentTask(view, attempt.body, undefined) };
        } else if (result.artifactUpdate) {
          const u = result.artifactUpdate as Json;
          mergeArtifact(view, u);
          attempt = await this.ensureRemoteIds(attempt, { id: u.taskId ?? null, contextId: u.contextId ?? null });
          yield { artifactUpdate: withIds(u, attempt.body) };
        } else if (result.statusUpdate) {
          const u = result.statusUpdate as Json;
          view.id ??= u.taskId ?? null;
          view.contextId ??= u.contextId ?? null;
          view.status = u.status ?? null;
          attempt = await this.ensureRemoteIds(attempt, view);
          if (isTerminal(stateOf(view))) {
            ended = true;
            const final = await this.observeTask(attempt, target, view);
            yield { statusUpdate: { ...(withIds(u, attempt.body) as Json), status: final.status as JsonValue, metadata: final.metadata as JsonValue } };
            return;
          }
          yield { statusUpdate: withIds(u, attempt.body) };
        } else if (result.message) {
          yield { message: withIds(result.message, attempt.body) };
        }
      }
    } catch (err) {
      if (!ended && opts.effect) await this.observe(attempt, target, { kind: 'lost', reason: err instanceof Error ? err.message : 'stream failed' });
      throw toCallerError(err);
    }
    if (!ended && opts.effect) {
      const parsed = TaskView.safeParse(view);
      if (isInterrupted(stateOf(view)) && parsed.success) await this.settleAnsweredTurn(attempt, parsed.data);
      else if (!isInterrupted(stateOf(view))) await this.observe(attempt, target, { kind: 'lost', reason: 'stream ended before a terminal state' });
    }
  }

  /**
   * ListTasks: this caller's tasks at this delegatee, newest first, as Baton
   * recorded them (no remote round trip per task; GetTask gives the live view).
   */
  async listTasks(caller: Caller, delegateeId: string | undefined, opts: { pageSize?: number; pageToken?: string; contextId?: string }): Promise<Json> {
    const pageSize = Math.min(Math.max(opts.pageSize ?? 50, 1), 100);
    const tasks: Json[] = [];
    let cursor = opts.pageToken || undefined;
    // Bounded scan: at most 20 store pages per call, then hand back a cursor.
    for (let pages = 0; pages < 20 && tasks.length < pageSize; pages++) {
      const page = await this.deps.store.listCurrent(ATTEMPT_SCHEMA, { limit: 200, ...(cursor ? { cursor } : {}) });
      for (const rec of page.records) {
        const a = rec.body as AttemptBody;
        if (a.caller_id !== caller.id || (delegateeId !== undefined && a.delegatee_id !== delegateeId)) continue;
        if (opts.contextId && a.context_id !== opts.contextId) continue;
        if (tasks.length < pageSize) tasks.push(placeholderTask(a));
      }
      cursor = page.cursor;
      if (!cursor) break;
    }
    return { tasks, nextPageToken: cursor ?? '', pageSize, totalSize: tasks.length };
  }

  /** GetTask: Baton's id in, Baton's view out; verifies on first sight of a terminal state. */
  async getTask(caller: Caller, attemptId: string, historyLength?: number): Promise<Json> {
    const attempt = await this.attemptFor(caller, attemptId);
    if (!attempt) throw new TaskNotFound(attemptId);
    const target = await this.deps.delegatees.resolve(attempt.body.delegatee_id);
    if (!attempt.body.remote.task_id) return placeholderTask(attempt.body);
    const raw = await this.deps.remote.call(target.endpoint, 'GetTask', { id: attempt.body.remote.task_id, ...(historyLength !== undefined ? { historyLength } : {}) }, { headers: target.headers });
    if (attempt.body.state === 'closed') return presentTask(raw as Json, attempt.body, attempt.body.outcome);
    return this.observeTask(attempt, target, raw);
  }

  /**
   * CancelTask: forwarded without a budget charge — a safe stop must stay
   * possible when the budget is spent or the delegation revoked. The
   * acknowledgement is only an observation; read-back decides (RW-003 §10.3).
   */
  async cancel(caller: Caller, attemptId: string): Promise<Json> {
    const found = await this.attemptFor(caller, attemptId);
    if (!found) throw new TaskNotFound(attemptId);
    let attempt = await this.latestOf(found);
    if (attempt.body.state !== 'closed' && !attempt.body.cancel_cause) {
      attempt = await this.revise(attempt, { cancel_cause: { cause: 'caller', at: utc(this.deps.clock.now()) } });
    }
    return this.cancelAttempt(attempt);
  }

  private async cancelAttempt(attempt: Attempt): Promise<Json> {
    const target = await this.deps.delegatees.resolve(attempt.body.delegatee_id);
    if (!attempt.body.remote.task_id) throw new BatonError('unavailable', 'the delegatee has not named its task yet');
    const raw = await this.deps.remote.call(target.endpoint, 'CancelTask', { id: attempt.body.remote.task_id }, { headers: target.headers });
    if (attempt.body.state === 'closed') return presentTask(raw as Json, attempt.body, attempt.body.outcome);
    return this.observeTask(attempt, target, raw);
  }

  private async ensureRemoteIds(attempt: Attempt, view: Json): Promise<Attempt> {
    if (attempt.body.remote.task_id !== undefined || typeof view.id !== 'string') return attempt;
    return this.revise(attempt, { remote: { ...attempt.body.remote, task_id: view.id, ...(typeof view.contextId === 'string' ? { context_id: view.contextId } : {}) }, state: 'open' });
  }

  /** Records and, when terminal, verifies one observed remote task; returns it as the caller sees it. */
  async observeTask(attempt: Attempt, target: ResolvedDelegatee, rawTask: JsonValue): Promise<Json> {
    const parsed = TaskView.safeParse(rawTask);
    if (!parsed.success) {
      await this.observe(attempt, target, { kind: 'lost', reason: 'remote task is malformed' });
      throw new BatonError('unavailable', 'delegatee returned a malformed task');
    }
    const view = parsed.data;
    let current = attempt;
    if (current.body.remote.task_id === undefined) {
      current = await this.revise(current, { remote: { ...current.body.remote, task_id: view.id, context_id: view.contextId }, state: 'open' });
    }
    if (!isTerminal(view.status.state)) {
      if (isInterrupted(view.status.state)) current = await this.settleAnsweredTurn(current, view);
      return presentTask(rawTask as Json, current.body, undefined);
    }
    const revised = await this.observe(current, target, { kind: 'task', task: view, fingerprint: fingerprint(view) });
    return presentTask(rawTask as Json, revised.body, revised.body.outcome);
  }

  /**
   * Admission for a send, with the A2A push config a caller may put in
   * `configuration`: it is the integrator's webhook, so it is checked before
   * admission, registered with Baton against Baton's task id, and never
   * forwarded — the delegatee gets Baton's own webhook instead (if it
   * supports push), whose notifications only ever trigger a read-back.
   */
  private async admitWithPush(caller: Caller, delegateeId: string, params: Json, operation: string) {
    const configuration = params.configuration as Json | undefined;
    const requested = configuration?.taskPushNotificationConfig;
    if (requested === undefined || requested === null) return this.admit(caller, delegateeId, params, operation);
    if (!this.deps.push) throw new BatonError('unsupported', 'push notifications are not enabled on this gateway');
    this.deps.push.validate(requested);
    const taskId = (params.message as Json | undefined)?.taskId;
    if (typeof taskId === 'string' && taskId !== '') {
      // A follow-up turn: register on the existing task first, so a refused
      // config refuses only this turn instead of failing the whole task.
      const prior = await this.attemptFor(caller, taskId);
      if (!prior) throw new TaskNotFound(taskId);
      await this.deps.push.register(caller, prior, requested);
      const admitted = await this.admit(caller, delegateeId, params, operation);
      return { ...admitted, forwarded: this.withOwnWebhook(admitted.forwarded, admitted.attempt, admitted.target) };
    }
    const admitted = await this.admit(caller, delegateeId, params, operation);
    const { attempt, target } = admitted;
    try {
      await this.deps.push.register(caller, attempt, requested);
    } catch (err) {
      await this.observe(attempt, target, { kind: 'not_transmitted' });
      throw err;
    }
    return { ...admitted, forwarded: this.withOwnWebhook(admitted.forwarded, attempt, target) };
  }

  /** The forwarded params with the integrator's webhook replaced by Baton's own (or none). */
  private withOwnWebhook(forwarded: Json, attempt: Attempt, target: ResolvedDelegatee): Json {
    const { taskPushNotificationConfig: _integrators, ...rest } = (forwarded.configuration as Json | undefined) ?? {};
    const own: Json = this.deps.push && this.supportsPush(target) ? { taskPushNotificationConfig: this.deps.push.inbound(attempt.record_id) } : {};
    return { ...forwarded, configuration: { ...rest, ...own } };
  }

  private supportsPush(target: ResolvedDelegatee): boolean {
    return (target.verification.card.capabilities as { pushNotifications?: boolean } | undefined)?.pushNotifications === true;
  }

  /**
   * Asks the delegatee to notify Baton's own webhook about an open task (an
   * integrator registered one after the send). Best effort: without it the
   * outbox's poll still finds the outcome.
   */
  async subscribePush(attempt: Attempt): Promise<boolean> {
    const latest = await this.latestOf(attempt);
    if (!this.deps.push || latest.body.state === 'closed' || latest.body.remote.task_id === undefined) return false;
    const target = await this.deps.delegatees.resolve(latest.body.delegatee_id);
    if (!this.supportsPush(target)) return false;
    await this.deps.remote.call(target.endpoint, 'CreateTaskPushNotificationConfig', { ...this.deps.push.inbound(latest.record_id), taskId: latest.body.remote.task_id }, { headers: target.headers });
    return true;
  }

  /** Re-reads an open task at its delegatee (a notification arrived, or a poll is due); verifies it if terminal. */
  async refresh(attemptId: string): Promise<void> {
    const rec = await this.deps.store.getRecord(attemptId);
    if (!rec || !rec.schema_ref.endsWith('#execution_attempt')) return;
    const attempt = rec as unknown as Attempt;
    if (attempt.body.state === 'closed' || attempt.body.remote.task_id === undefined) return;
    const target = await this.deps.delegatees.resolve(attempt.body.delegatee_id);
    const raw = await this.deps.remote.call(target.endpoint, 'GetTask', { id: attempt.body.remote.task_id }, { headers: target.headers });
    await this.observeTask(attempt, target, raw);
  }

  /**
   * Starts the attempt that continues a checkpointed one on another delegatee
   * (RW-003 §11.4): same caller, the revised contract chain, a fresh fence
   * set, the exact stored input, and references to the checkpoint and the
   * attempt it replaces. Returns once the delegatee has accepted the task;
   * the outcome is verified as for any other attempt.
   */
  async startResumed(prior: Attempt, contracts: readonly DelegationContract[], delegateeId: string, input: Json, checkpoint: RevisionRef): Promise<Attempt> {
    const target = await this.deps.delegatees.resolve(delegateeId);
    const chain = await this.deps.authority.evaluate(contracts, this.deps.authority.operation('a2a.SendMessage', 'proposal'));
    const message: Json = { ...input, messageId: this.deps.ids.next('msg') };
    const attempt = await this.admitOn({ id: prior.body.caller_id }, target, chain, contracts[0]!, contracts[contracts.length - 1]!, message, 'a2a.SendMessage', {
      resumed_from: checkpoint,
      reassigned_from: prior.record_id,
    });
    const metadata = { ...((message.metadata as Json | undefined) ?? {}), [CONTRACT_EXTENSION]: { chain: contracts as unknown as JsonValue } };
    const forwarded: Json = { message: { ...message, metadata }, configuration: { returnImmediately: true } };
    let result: JsonValue;
    try {
      result = await this.deps.remote.call(target.endpoint, 'SendMessage', forwarded, { headers: { ...target.headers, 'a2a-extensions': CONTRACT_EXTENSION } });
    } catch (err) {
      return this.observe(attempt, target, lostOrRefused(err));
    }
    const task = (result as Json).task;
    if (task === undefined) return this.observe(attempt, target, { kind: 'lost', reason: 'remote answered with a message, no task to read back' });
    await this.observeTask(attempt, target, task);
    return this.latestOf(attempt);
  }

  /** Fresh fence + admission for one counted operation; returns the forwarded params. */
  private async admit(caller: Caller, delegateeId: string, params: Json, operation: string) {
    const target = await this.deps.delegatees.resolve(delegateeId).catch((err: unknown) => {
      // A card that no longer verifies (not a network failure) is a breaker trigger on the agent Baton last verified.
      const agent = this.deps.delegatees.lastCardId(delegateeId);
      if (agent && isBatonError(err) && err.code !== 'unavailable') this.deps.signal?.({ kind: 'card_rejected', agent, detail: err.message });
      throw err;
    });
    const message = params.message as Json | undefined;
    if (!message || typeof message !== 'object') throw invalidRequest('SendMessage needs a message');
    if (message.taskId) return this.continueTask(caller, target, params, message, operation);
    const { [CONTRACT_EXTENSION]: presented, ...otherMetadata } = (message.metadata as Json | undefined) ?? {};
    const authority = presented !== undefined && caller.upstream
      ? await this.deps.authority.adopt(caller, chainOf(presented), (await this.deps.cards.get(delegateeId)).option, target.option, textOf(message))
      : await this.deps.authority.open(caller, target.option, textOf(message));
    const chain = await authority.reevaluate(this.deps.authority.operation(operation, 'proposal'));
    const contracts = authority.contracts;
    const attempt = await this.admitOn(caller, target, chain, contracts[0]!, contracts[contracts.length - 1]!, message, operation);
    const forwarded: Json = {
      ...params,
      message: { ...message, metadata: { ...otherMetadata, [CONTRACT_EXTENSION]: { chain: contracts as unknown as JsonValue } } },
    };
    return { attempt, target, forwarded, chain };
  }

  /**
   * One counted effect: fresh fence over every applicable authority stream,
   * the PermissionDecision, and the reservation on root, ancestors and leaf,
   * all in one durable transaction before anything is sent (ADR-0014).
   */
  private async admitEffect(
    attemptId: string,
    chain: EvaluatedChain,
    leaf: DelegationContract,
    operation: string,
    /** Builds the attempt record this effect starts, committed in the admission's transaction. */
    startAttempt?: (effect: { effect_id: string; reservation_id: string; fence_set: ControlBoundaryRef[]; idempotency_key: string }) => Attempt,
    /** Further records committed with the attempt (its input). */
    alongside: readonly SealedRecord<Record<string, unknown>>[] = [],
  ) {
    const at = utc(this.deps.clock.now());
    const effectId = this.deps.ids.next('eff');
    const reservationId = this.deps.ids.next('res');
    const scopes = chain.fenceScopes as ControlScopeRef[];
    const fence = [...(await this.deps.store.control.fenceSet(scopes))];
    const effect = { effect_id: effectId, reservation_id: reservationId, fence_set: fence, idempotency_key: effectId };
    const attempt = startAttempt?.(effect);
    const decision = sealRecord(
      {
        type: 'permission_decision',
        issuedBy: this.deps.gatewayActor,
        lifecycle: 'recorded',
        body: { decision: 'allow', effect_id: effectId, attempt_id: attemptId, operation, delegation_ref: refOf(leaf), fence_set: fence, evaluated_at: at },
      },
      this.deps,
    );
    await this.admitOrSignal(leaf, {
      effect_id: effectId,
      reservation_id: reservationId,
      node_id: leaf.record_id,
      kind: 'reserve',
      amounts: { [INVOCATIONS]: 1n },
      fence_set: fence,
      scopes: scopes.filter((s) => s.scope_kind !== 'delegation'),
      decision,
      attempt_scope: { space_id: this.deps.spaceId, scope_kind: 'attempt', scope_id: attemptId },
      actor_ref: this.deps.gatewayActor,
      at,
      // One transaction: the effect's admission, its attempt record and the started observation.
      ...(attempt ? { records: [...alongside, attempt], events: [this.startedEvent(attempt)] } : {}),
    });
    return { ...effect, attempt };
  }

  /** The ledger's final admission; a refusal for budget or a stale fence is a breaker signal. */
  private async admitOrSignal(leaf: DelegationContract, req: Parameters<Store['ledger']['admit']>[0]): Promise<void> {
    try {
      await this.deps.store.ledger.admit(req);
    } catch (err) {
      const root = leaf.body.lineage.kind === 'child' ? leaf.body.lineage.root_ref.object_id : leaf.record_id;
      const failures = isBatonError(err, 'limit_exceeded') ? (err.details.failures as Array<{ node_id?: string }> | undefined) : undefined;
      if (failures) this.deps.signal?.({ kind: 'refused', reason: 'budget', delegation: leaf.record_id, root, ...(failures[0]?.node_id ? { exhausted: failures[0].node_id } : {}) });
      if (isBatonError(err, 'context_invalidated') && !/expired/.test(err.message)) this.deps.signal?.({ kind: 'refused', reason: 'stale', delegation: leaf.record_id, root });
      throw err;
    }
  }

  private async admitOn(
    caller: Pick<Caller, 'id'>,
    target: ResolvedDelegatee,
    chain: EvaluatedChain,
    root: DelegationContract,
    child: DelegationContract,
    message: Json,
    operation: string,
    /** A resumed attempt (RW-003 §7.2): the checkpoint it continues from and the attempt it replaces. */
    resumed?: Pick<AttemptBody, 'resumed_from' | 'reassigned_from'>,
  ): Promise<Attempt> {
    const attemptId = this.deps.ids.next('att');
    const input = taskInput(attemptId, message, this.deps);
    const seal = (effect: Pick<AttemptBody, 'effect_id' | 'reservation_id' | 'fence_set' | 'idempotency_key'>): Attempt => sealRecord<AttemptBody>(
      {
        type: 'execution_attempt',
        issuedBy: this.deps.gatewayActor,
        lifecycle: 'active',
        body: {
          attempt_id: attemptId,
          space_id: this.deps.spaceId,
          delegatee_id: target.config.id,
          delegation_ref: refOf(child),
          root_ref: refOf(root),
          caller_id: caller.id,
          ...effect,
          remote: { endpoint: target.endpoint, protocol: 'a2a', protocol_version: target.protocolVersion, binding: 'JSONRPC', card_ref: target.option.card_ref, card: target.observation, extensions: [CONTRACT_EXTENSION], ...(typeof message.messageId === 'string' ? { message_id: message.messageId } : {}) },
          context_id: this.deps.ids.next('ctx'),
          state: 'dispatching',
          input_ref: refOf(input),
          ...resumed,
        },
      },
      // The attempt's record id is its attempt id, so Baton's task id names the record.
      { ids: { next: (p) => (p === 'rev' ? this.deps.ids.next('rev') : attemptId) }, clock: this.deps.clock },
    );
    const { attempt } = await this.admitEffect(attemptId, chain, child, operation, seal, [input]);
    this.track(attempt!);
    return attempt!;
  }

  /**
   * The previous turn ended in an interrupted state the remote answered with:
   * that turn's effect happened, so its reservation is consumed, with the
   * attempt revision that recorded the answer as evidence.
   */
  /**
   * The remote answered this turn with an interrupted state (INPUT_REQUIRED,
   * AUTH_REQUIRED): the turn's effect happened, so its reservation is
   * consumed now, with the revision recording that answer as evidence —
   * not left held until a follow-up that may never be admitted (an expired
   * task admits none).
   */
  private async settleAnsweredTurn(attempt: Attempt, view: TaskView): Promise<Attempt> {
    const r = await this.deps.store.ledger.reservation(attempt.body.reservation_id);
    if (!r || r.status !== 'held') return attempt;
    const answered = await this.revise(attempt, { observed: fingerprint(view) });
    await this.settleInterruptedTurn(answered);
    return answered;
  }

  private async settleInterruptedTurn(prior: Attempt): Promise<void> {
    const r = await this.deps.store.ledger.reservation(prior.body.reservation_id);
    if (!r || r.status !== 'held') return;
    const actual = new Map(Object.entries(r.amounts).map(([k, v]) => [k, BigInt(v)]));
    await this.deps.store.ledger.settle({ reservation_id: r.reservation_id, outcome: { kind: 'measured', actual }, evidence: refOf(prior), at: utc(this.deps.clock.now()) });
  }

  private startedEvent(attempt: Attempt): ControlEventInput {
    return {
      event_type: 'rw003.execution.started',
      control_scope_ref: { space_id: this.deps.spaceId, scope_kind: 'attempt', scope_id: attempt.body.attempt_id },
      actor_ref: this.deps.gatewayActor,
      produced_records: [refOf(attempt)],
      fence_set: attempt.body.fence_set,
      idempotency_key: `started:${attempt.body.effect_id}`,
    };
  }

  private async started(attempt: Attempt): Promise<void> {
    await this.deps.store.control.appendControl(this.startedEvent(attempt));
  }

  /**
   * A follow-up turn on an interrupted task (INPUT_REQUIRED, AUTH_REQUIRED):
   * same Baton task and contracts, re-evaluated now, and a new admitted
   * effect recorded as the attempt's next revision.
   */
  private async continueTask(caller: Caller, target: ResolvedDelegatee, params: Json, message: Json, operation: string) {
    const prior = await this.attemptFor(caller, String(message.taskId));
    if (!prior || prior.body.delegatee_id !== target.config.id) throw new TaskNotFound(String(message.taskId));
    if (prior.body.state === 'closed' || prior.body.remote.task_id === undefined) {
      throw new BatonError('unsupported', 'this task cannot take another message', { state: prior.body.state });
    }
    const authority = await this.deps.authority.resume(caller, prior.body.delegation_ref);
    const chain = await authority.reevaluate(this.deps.authority.operation(operation, 'proposal'));
    await this.settleInterruptedTurn(prior);
    const { attempt: _none, ...effect } = await this.admitEffect(prior.body.attempt_id, chain, authority.contracts[authority.contracts.length - 1]!, operation);
    const attempt = await this.revise(prior, { ...effect, state: 'open' });
    await this.started(attempt);
    const { [CONTRACT_EXTENSION]: _presented, ...otherMetadata } = (message.metadata as Json | undefined) ?? {};
    const forwarded: Json = {
      ...params,
      message: {
        ...message,
        taskId: prior.body.remote.task_id,
        ...(prior.body.remote.context_id ? { contextId: prior.body.remote.context_id } : {}),
        metadata: { ...otherMetadata, [CONTRACT_EXTENSION]: { chain: authority.contracts as unknown as JsonValue } },
      },
    };
    return { attempt, target, forwarded, chain };
  }

  /** Projects an observation (read-back included) and revises the attempt with its outcome. */
  /**
   * Projects an observation and revises the attempt with its outcome, once:
   * a stream, a cancel and a poll can all see the same terminal state, so
   * observations of one attempt are serialised and a closed attempt is only
   * re-verified on purpose (reconciliation).
   */
  private observe(attempt: Attempt, target: Target, observation: Observation, opts: { reverify?: boolean } = {}): Promise<Attempt> {
    return this.serially(attempt.record_id, async () => {
      const latest = await this.latestOf(attempt);
      if (latest.body.state === 'closed' && !opts.reverify) return latest;
      const scopes = await this.scopesOf(latest);
      const verdict = await verifyAttempt(latest, observation, { endpoint: target.endpoint, headers: target.headers, criteria: target.config.acceptance, scopes }, this.deps, (receipt, projection) =>
        this.seal(latest, {
          state: 'closed',
          outcome: projection.outcome,
          receipt_ref: refOf(receipt),
          ...(observation.kind === 'task' ? { observed: observation.fingerprint } : {}),
        }),
      );
      if (!verdict) return latest;
      this.track(verdict.closed);
      this.deps.push?.closed(verdict.closed, verdict.evidence);
      const c = verdict.closed.body;
      if (c.outcome) this.deps.signal?.({ kind: 'outcome', outcome: c.outcome, agent: c.remote.card_ref.object_id, delegation: c.delegation_ref.object_id });
      if (c.outcome === 'unknown' || c.outcome === 'partially_applied') {
        await this.deps.escalate?.('effect_unverifiable', { attempt_id: c.attempt_id, delegation_id: c.delegation_ref.object_id }, [`outcome ${c.outcome}: the reservation is held until reconciliation`, ...verdict.projection.reasons]);
      }
      if (verdict.projection.settlement !== 'hold') this.deps.authority.release(verdict.closed.body.root_ref.object_id);
      return verdict.closed;
    });
  }

  private readonly queues = new Map<string, Promise<unknown>>();

  /** Runs `fn` after every earlier call for `key` has settled (in this process). */
  private serially<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.queues.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.queues.set(key, tail);
    void tail.then(() => this.queues.get(key) === tail && this.queues.delete(key));
    return next;
  }

  /** The newest stored revision of an attempt (another path may have revised it). */
  private async latestOf(attempt: Attempt): Promise<Attempt> {
    return ((await this.deps.store.getRecord(attempt.record_id)) as unknown as Attempt | undefined) ?? attempt;
  }

  /** The authority scopes an attempt fenced, re-derived from its stored contracts. */
  async scopesOf(attempt: Attempt): Promise<ControlScopeRef[]> {
    const child = await this.deps.store.getRecord(attempt.body.delegation_ref.object_id, attempt.body.delegation_ref.revision_id);
    return child ? (parseContract(child).body.control_scopes as ControlScopeRef[]) : [];
  }

  /** Appends a revision on top of the newest one, so concurrent patches never fork the record. */
  async revise(attempt: Attempt, patch: Partial<AttemptBody>): Promise<Attempt> {
    const next = await this.sealRevision(await this.latestOf(attempt), patch);
    this.track(next);
    return next;
  }

  private async sealRevision(attempt: Attempt, patch: Partial<AttemptBody>): Promise<Attempt> {
    const next = this.seal(attempt, patch);
    await this.deps.store.putRecord(next);
    return next;
  }

  /** The next revision of `attempt` with `patch` applied (not stored). */
  private seal(attempt: Attempt, patch: Partial<AttemptBody>): Attempt {
    return sealRecord<AttemptBody>(
      { type: 'execution_attempt', issuedBy: this.deps.gatewayActor, lifecycle: patch.state === 'closed' ? 'recorded' : 'active', recordId: attempt.record_id, prior: refOf(attempt), body: { ...attempt.body, ...patch } },
      this.deps,
    );
  }

  /**
   * Reconciliation (ADR-0014: only authoritative reconciliation settles an
   * uncertain effect). Re-reads the remote task twice through the
   * verification route; an agreeing terminal read settles with the new
   * receipt as evidence, anything else leaves the reservation held.
   */
  async reconcile(reservationId: string): Promise<{ reservation_id: string; status: string; outcome?: string; reason: string }> {
    const r = await this.deps.store.ledger.reservation(reservationId);
    if (!r) throw invalidRequest('no such reservation', { reservation_id: reservationId });
    const result = (status: string, reason: string, outcome?: string) => ({ reservation_id: reservationId, status, reason, ...(outcome ? { outcome } : {}) });
    if (r.status !== 'held' && r.status !== 'unknown') return result(r.status, 'already resolved');
    const attempt = await this.attemptOfDecision(r.decision_ref.content_digest);
    if (!attempt) return result(r.status, 'no attempt record for this reservation; resolve it manually with evidence');
    if (!attempt.body.remote.task_id) return result(r.status, 'the delegatee never named a task; resolve it manually with evidence');
    const target = await this.deps.delegatees.resolve(attempt.body.delegatee_id);
    const first = await readBack(this.deps.remote, target.endpoint, attempt.body.remote.task_id, target.headers);
    if (first.kind !== 'task') return result(r.status, `read-back unavailable: ${first.reason}`);
    const revised = await this.observe(attempt, target, { kind: 'task', task: first.task, fingerprint: first.fingerprint }, { reverify: true });
    const after = await this.deps.store.ledger.reservation(reservationId);
    return result(after?.status ?? r.status, revised.body.outcome ? `read-back projected ${revised.body.outcome}` : 'remote task still open', revised.body.outcome);
  }

  /**
   * An operator's resolution of an effect Baton cannot verify itself, with
   * their evidence recorded as an immutable record. Never automatic.
   */
  async resolveManually(reservationId: string, as: 'not_dispatched' | 'consumed', note: string, operator: ActorRef): Promise<string> {
    const r = await this.deps.store.ledger.reservation(reservationId);
    if (!r) throw invalidRequest('no such reservation', { reservation_id: reservationId });
    const record = sealRecord(
      { type: 'verification_receipt', issuedBy: operator, lifecycle: 'recorded', body: { profile: 'operator-reconciliation/1', reservation_id: reservationId, resolution: as, note: note.slice(0, 2048), no_project_mutation: true } },
      this.deps,
    );
    await this.deps.store.putRecord(record);
    const at = utc(this.deps.clock.now());
    const outcome = as === 'not_dispatched' ? ({ kind: 'not_dispatched' } as const) : ({ kind: 'measured', actual: new Map(Object.entries(r.amounts).map(([k, v]) => [k, BigInt(v)])) } as const);
    const settled = await this.deps.store.ledger.settle({ reservation_id: reservationId, outcome, evidence: refOf(record), at });
    this.deps.authority.release(r.root_id);
    return settled.status;
  }

  async attemptOfDecision(digest: string): Promise<Attempt | undefined> {
    const decision = await this.deps.store.getByDigest(digest);
    const attemptId = decision?.body.attempt_id;
    if (typeof attemptId !== 'string') return undefined;
    return (await this.deps.store.getRecord(attemptId)) as unknown as Attempt | undefined;
  }

  /** The caller's own attempt, or TaskNotFound semantics (never another caller's task). */
  async attemptFor(caller: Caller, attemptId: string): Promise<Attempt | undefined> {
    const rec = await this.deps.store.getRecord(attemptId);
    if (!rec || !rec.schema_ref.endsWith('#execution_attempt')) return undefined;
    const attempt = rec as unknown as Attempt;
    return attempt.body.caller_id === caller.id ? attempt : undefined;
  }
}

/** A2A TaskNotFoundError at the edge. */
export class TaskNotFound extends Error {
  override readonly name = 'TaskNotFound';
  constructor(readonly taskId: string) {
    super('task not found');
  }
}

const ATTEMPT_SCHEMA = schemaRefFor('execution_attempt');

