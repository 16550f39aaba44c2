/**
 * Stopping running work (RW-003 §8: "Descendants acknowledge or time out;
 * unknown acknowledgements trigger read-back and escalation"). The sweep
 * walks the durable work queue — every open turn on every node — and stops
 * the attempts whose fences no longer hold. Stopping records the first cause
 * only (ADR-0014), sends CancelTask, whose answer is only an observation,
 * reads back, and commits each open turn's verdict from what the read says.
 */
import { fingerprint, isTerminal, TaskView } from '../attempts/task-view.ts';
import { checkFences, streamsToRead, type ControlBoundaryRef, type StreamHead } from '../control/fence.ts';
import { streamKey, type StreamId } from '../control/scope.ts';
import { utc } from '../records/time.ts';
import type { AttemptBody } from '../attempts/record.ts';
import type { WorkRow } from '../store/tx/ops.ts';
import type { Attempt } from './attempts.ts';
import type { PathDeps } from './path/deps.ts';
import { findByContext } from './path/follow.ts';
import { rebuildTurn } from './path/rebuild-turn.ts';
import { pinnedTarget } from './path/resolve-target.ts';
import type { Turn } from './path/turn.ts';
import { readBack, storedView } from './path/read-back.ts';
import { verdict } from './path/verify.ts';

export type StopCause = NonNullable<AttemptBody['cancel_cause']>['cause'];

type Fenced = Pick<Turn, 'fence_set' | 'scopes'>;

/** Most open turns whose fences this process remembers; past it the sweep reads a turn's from the store, as for one admitted elsewhere. */
const FENCED_LIMIT = 10_000;
/** Streams per heads read: few enough that the statement stays prepared (sqlite/ops.ts keeps those of up to 64 streams). */
const HEADS_PER_READ = 64;

export class Stopper {
  /** Attempts being stopped in this process: the sweep and an operator action must not both cancel and escalate. */
  private readonly stopping = new Set<string>();
  /** What each open turn fenced: immutable per turn, so read once, not on every pass (bounded by the open turns). */
  private readonly fenced = new Map<string, Fenced>();
  /**
   * Turns this process already asked to stop: one stop (and at most one
   * escalation) each, not one per pass while the delegatee takes its time;
   * the follower brings their verdict. Bounded by the open turns.
   */
  private readonly stopped = new Set<string>();

  constructor(private readonly deps: PathDeps) {}

  /**
   * A turn this process just admitted: what it fenced, so the sweep need not
   * rebuild it from the store (issue #24: at c=32 the sweep's rebuilds were
   * six reads for about one call in three). The admission's own fence set and scopes,
   * which a rebuild re-derives from its decision and leaf contract.
   */
  admitted(turn: Pick<Turn, 'effect_id'> & Fenced): void {
    if (this.fenced.size < FENCED_LIMIT) this.fenced.set(turn.effect_id, { fence_set: turn.fence_set, scopes: turn.scopes });
  }

  /**
   * One pass over the open turns; returns how many attempts it asked to stop.
   * The heads of every stream the open turns fenced are read together, not
   * turn by turn: a fence that moves is seen by this pass or the next either way.
   */
  async sweep(limit = 10_000): Promise<number> {
    let stopped = 0;
    const rows = await this.deps.store.work.list(limit, this.deps.gatewayActor.object_id);
    const open = new Set(rows.map((r) => r.effect_id));
    for (const id of this.fenced.keys()) if (!open.has(id)) this.fenced.delete(id);
    for (const id of this.stopped) if (!open.has(id)) this.stopped.delete(id);
    const watched = await this.watched(rows);
    const heads = await this.headsOf(watched.map((w) => w.fenced));
    for (const { row, fenced } of watched) {
      if (checkFences(fenced.fence_set, fenced.scopes, heads).length === 0) continue;
      // An operator's stop (or CancelTask) of the attempt may be under way since `watched` looked.
      if (this.leftAlone(row)) continue;
      try {
        const turn = await rebuildTurn(this.deps, row);
        if (!turn) continue;
        const { cause, detail, by, movedAt } = await this.whyStale(turn.fence_set);
        stopped++;
        this.stopped.add(row.effect_id);
        await this.stop(turn.attempt, cause, detail);
        // Propagation time: from the authority change being recorded to this stop (RW-003 §7.3 revocation).
        const seconds = movedAt === undefined ? undefined : Math.max(0, (this.deps.clock.now().getTime() - Date.parse(movedAt)) / 1000);
        await this.deps.events.emit({ type: 'stopped', cause, delegatee: turn.attempt.body.delegatee_id, ...(seconds !== undefined ? { seconds } : {}) });
        if (by) await this.deps.events.emit({ type: 'signal', signal: { kind: 'stopped', by, delegation: turn.attempt.body.delegation_ref.object_id, detail } });
      } catch (err) {
        await this.stoppingFailed(row, err);
      }
    }
    return stopped;
  }

  /** The open turns this pass checks, each with what it fenced (remembered, or rebuilt from the store once). */
  private async watched(rows: readonly WorkRow[]): Promise<Array<{ row: WorkRow; fenced: Fenced }>> {
    const out: Array<{ row: WorkRow; fenced: Fenced }> = [];
    for (const row of rows) {
      if (this.leftAlone(row)) continue;
      try {
        let fenced = this.fenced.get(row.effect_id);
        if (!fenced) {
          const t = await rebuildTurn(this.deps, row);
          if (!t) continue;
          this.fenced.set(row.effect_id, (fenced = { fence_set: t.fence_set, scopes: t.scopes }));
        }
        out.push({ row, fenced });
      } catch (err) {
        await this.stoppingFailed(row, err);
      }
    }
    return out;
  }

  /** Being stopped in this process now, or already asked to stop by an earlier pass. */
  private leftAlone(row: WorkRow): boolean {
    return this.stopping.has(row.attempt_id) || this.stopped.has(row.effect_id);
  }

  /** One attempt's failure must not end the pass for the others; it is handed to the operator. */
  private stoppingFailed(row: WorkRow, err: unknown): Promise<void> {
    return this.escalate(row.attempt_id, undefined, [`stopping failed: ${err instanceof Error ? err.message : String(err)}`]);
  }

  /** The heads of every stream the turns fenced, each stream read once, {@link HEADS_PER_READ} to a statement. */
  private async headsOf(turns: readonly Fenced[]): Promise<Map<string, StreamHead>> {
    const streams = new Map<string, StreamId>();
    for (const t of turns) for (const s of streamsToRead(t.fence_set, t.scopes)) streams.set(streamKey(s), s);
    const all = [...streams.values()];
    const heads = new Map<string, StreamHead>();
    for (let i = 0; i < all.length; i += HEADS_PER_READ) for (const [k, h] of await this.deps.store.control.heads(all.slice(i, i + HEADS_PER_READ))) heads.set(k, h);
    return heads;
  }

  /** Asks a running attempt to stop; returns its newest revision. */
  async stop(attempt: Attempt, cause: StopCause, detail?: string): Promise<Attempt> {
    if (this.stopping.has(attempt.record_id)) return this.deps.attempts.latest(attempt);
    this.stopping.add(attempt.record_id);
    try {
      return await this.stopOnce(attempt, cause, detail);
    } finally {
      this.stopping.delete(attempt.record_id);
    }
  }

  private async stopOnce(attempt: Attempt, cause: StopCause, detail?: string): Promise<Attempt> {
    let latest = await this.deps.attempts.latest(attempt);
    if (latest.body.state === 'closed') return latest;
    const at = utc(this.deps.clock.now());
    latest = await this.deps.attempts.revise(latest, (l) => (l.body.cancel_cause || l.body.state === 'closed' ? undefined : { cancel_cause: { cause, at, ...(detail ? { detail: detail.slice(0, 512) } : {}) } }));
    // An MCP call is cancelled where it runs (notifications/cancelled); its own verdict follows, `unknown` if it was cut.
    if (latest.body.remote.protocol === 'mcp') {
      const reasons: string[] = [];
      // A downstream Baton fronting the server hears it signed first, so it blocks new calls at once (issue #16).
      if (cause !== 'caller') await this.deps.federation?.notifyDownstream(latest.body.delegation_ref.object_id).catch((err: unknown) => reasons.push(`control notice was not accepted: ${err instanceof Error ? err.message : String(err)}`));
      if (!this.deps.calls?.abort(latest.record_id, `stopped: ${cause}`)) reasons.push('the MCP call does not run in this process; nothing to cancel here');
      if (reasons.length > 0) await this.escalate(latest.record_id, latest.body.delegation_ref.object_id, [`stop requested: ${cause}`, ...reasons]);
      return this.deps.attempts.latest(latest);
    }
    // Stopping must work exactly when the delegatee's card no longer would: the endpoint the attempt was sent to.
    const target = pinnedTarget(this.deps, latest);
    const turns = (await Promise.all((await this.deps.store.work.ofAttempt(latest.record_id)).map((r) => rebuildTurn(this.deps, r)))).filter((t): t is Turn => t !== undefined);
    const probe: Turn = turns[0] ?? { attempt: latest, effect_id: latest.body.effect_id, reservation_id: latest.body.reservation_id, fence_set: latest.body.fence_set, scopes: [], target };
    const taskId = (await this.deps.attempts.remoteTaskId(latest)) ?? (await findByContext(this.deps, probe).catch(() => undefined));
    const reasons: string[] = [];
    if (taskId === undefined) {
      reasons.push('the delegatee never named its task; nothing to cancel or read back');
    } else {
      // A separate-store downstream gateway hears it signed first, so it blocks new effects before its next fetch (issue #16).
      if (cause !== 'caller') await this.deps.federation?.notifyDownstream(latest.body.delegation_ref.object_id).catch((err: unknown) => reasons.push(`control notice was not accepted: ${err instanceof Error ? err.message : String(err)}`));
      await this.deps.remote.call(target.endpoint, 'CancelTask', { id: taskId }, { headers: target.headers }).catch((err: unknown) => reasons.push(`CancelTask was not acknowledged: ${err instanceof Error ? err.message : String(err)}`));
      const back = await readBack(this.deps.remote, target.endpoint, taskId, target.headers);
      if (back.kind !== 'task') reasons.push(`read-back after cancellation failed: ${back.reason}`);
      else if (!isTerminal(back.task.status.state)) reasons.push('the remote task is still running after cancellation');
      else latest = await this.closeTurns(latest, turns, taskId, back.raw);
    }
    if (reasons.length > 0) await this.escalate(latest.record_id, latest.body.delegation_ref.object_id, [`stop requested: ${cause}`, ...reasons]);
    return this.deps.attempts.latest(latest);
  }

  /** Each open turn's verdict from the task as read after the cancellation (its own read-back follows). */
  private async closeTurns(latest: Attempt, turns: Turn[], taskId: string, raw: unknown): Promise<Attempt> {
    const task = TaskView.parse(raw);
    if (turns.length === 0) {
      // An interrupted task has no turn in flight (each settled when answered): only the task closes.
      const cancelled = task.status.state === 'TASK_STATE_CANCELED' && (task.artifacts ?? []).length === 0;
      return this.deps.attempts.revise(latest, (l) => (l.body.state === 'closed' ? undefined : { state: 'closed', outcome: cancelled ? 'cancelled' : 'partially_applied', observed: fingerprint(task), view: storedView(raw as never), remote: { ...{}, ...l.body.remote, task_id: taskId } }));
    }
    for (const turn of turns) {
      turn.remoteTaskId = taskId;
      latest = await verdict(this.deps, turn, { kind: 'task', task, fingerprint: fingerprint(task) }, raw as never);
    }
    return latest;
  }

  /** Which authority change made a fence stale, for the recorded cause. */
  private async whyStale(fence: readonly ControlBoundaryRef[]): Promise<{ cause: StopCause; detail: string; by?: 'revocation' | 'policy'; movedAt?: string }> {
    for (const b of fence) {
      const h = await this.deps.store.control.streamHead(b);
      if (h && h.event_id !== b.event_id) {
        const [moved] = await this.deps.store.control.readStream(b, { after: h.position - 1, limit: 1 });
        // Revoked for reassignment (RW-003 §11.4): the sweep may stop the turn before the reassignment's own stop does.
        const cause = h.state === 'tripped' ? 'breaker' : h.state === 'reassigning' ? 'reassignment' : h.state === 'revoked' || h.state === 'expired' ? 'revocation' : 'operator';
        const detail = `${b.branch_id} is now ${h.state} (position ${h.position})`;
        // A trip is already a breaker, and a reassignment is no revocation for cause; a policy or consent
        // change, or a revocation, is a trigger for one (RW-003 §7.3).
        const by = cause === 'breaker' ? undefined : /^(space|policy|consent):/.test(b.branch_id) ? 'policy' : h.state === 'revoked' ? 'revocation' : undefined;
        return { cause, detail, ...(by ? { by } : {}), ...(moved ? { movedAt: moved.recorded_at } : {}) };
      }
    }
    return { cause: 'revocation', detail: 'a fenced authority stream moved' };
  }

  private async escalate(attemptId: string, delegationId: string | undefined, reasons: string[]): Promise<void> {
    await this.deps.events.emit({ type: 'escalate', kind: 'cancel_unacknowledged', subject: { attempt_id: attemptId, ...(delegationId ? { delegation_id: delegationId } : {}) }, reasons });
  }
}
