/**
 * Forward → follow → verdict for one admitted turn, the part every entry
 * point shares (SendMessage, streaming, returnImmediately, a resumed
 * attempt, the durable follower). While a node follows a turn it keeps the
 * turn's lease; whatever is not over within the wait it hands back to the
 * work queue, where any node's follower continues it.
 */
import { fingerprint, TaskView } from '../../attempts/task-view.ts';
import { BatonError } from '../../errors.ts';
import { utc } from '../../records/time.ts';
import type { Attempt } from '../attempts.ts';
import { RemoteRpcError } from '../remote.ts';
import type { RemoteResult } from './classify.ts';
import type { PathDeps } from './deps.ts';
import { follow, type FollowStep } from './follow.ts';
import { forward, type Forwarded } from './forward.ts';
import type { Json, Turn } from './turn.ts';
import { verdict, verdictInterrupted, verdictReleased } from './verify.ts';

export type TurnEnd =
  | { kind: 'closed' | 'interrupted'; attempt: Attempt }
  | { kind: 'message'; attempt: Attempt; message: Json }
  /** Not over yet (or the reply was lost): the durable follower has it; the caller gets Baton's task id. */
  | { kind: 'pending'; reason: string; view?: Json; lost?: true };

export type Sent = Exclude<Forwarded, { kind: 'failed' }> | { kind: 'lost'; reason: string };

/**
 * Sends the turn. A definite refusal (or a request that never left) releases
 * the turn's reservation with its reason and throws the remote's error; an
 * uncertain result hands the turn to the follower and reports it lost.
 */
export async function send(deps: PathDeps, turn: Turn, params: Json, streaming: boolean): Promise<Sent> {
  const f = await forward(deps, turn, params, streaming);
  if (f.kind !== 'failed') return f;
  if (f.result.kind === 'uncertain') {
    await handOver(deps, turn, deps.follow.pollMinMs);
    return { kind: 'lost', reason: f.result.reason };
  }
  await verdictReleased(deps, turn, f.result.reason);
  throw callerError(f.result);
}

/** Follows a sent turn until `until`, yielding remote events as they come, then commits its verdict. */
export async function* complete(deps: PathDeps, turn: Turn, sent: Sent | undefined, until: number, retryMs = deps.follow.pollMinMs): AsyncGenerator<FollowStep, TurnEnd> {
  const end = yield* completeTurn(deps, turn, sent, until, retryMs);
  if (end.kind === 'pending') await deps.events.emit({ type: 'handed_over', attempt_id: turn.attempt.body.attempt_id, delegatee: turn.attempt.body.delegatee_id, reason: end.reason, lost: end.lost === true });
  return end;
}

async function* completeTurn(deps: PathDeps, turn: Turn, sent: Sent | undefined, until: number, retryMs: number): AsyncGenerator<FollowStep, TurnEnd> {
  if (sent?.kind === 'lost') return { kind: 'pending', reason: sent.reason, lost: true };
  const lease = keepLease(deps, turn);
  let end;
  try {
    end = yield* follow(deps, turn, sent, until);
  } finally {
    lease.stop();
  }
  // A node that lost the lease (it was too slow to renew, and another node took the turn over) stops here: the
  // turn is the other node's to judge, so two verdicts never split one effect (issue #25 item 2). A row that is
  // gone had its verdict committed (here, by a stop): the verdict below finds it.
  if (lease.lost() && (await followedElsewhere(deps, turn))) return { kind: 'pending', reason: 'another node took this turn over', ...(end.kind === 'waiting' && end.view ? { view: end.view } : {}) };
  // A delegatee that streamed past the turn's bounds is hostile input after transmission (issue #25 item 15):
  // the effect was sent, so nothing is released; the turn is judged lost, `unknown` with the bound as its reason.
  if (end.kind === 'lost') return { kind: 'closed', attempt: await verdict(deps, turn, { kind: 'lost', reason: end.reason }) };
  if (end.kind === 'waiting') {
    await noteRemoteTask(deps, turn);
    await handOver(deps, turn, retryMs);
    return { kind: 'pending', reason: end.reason, ...(end.view ? { view: end.view } : {}) };
  }
  if (end.kind === 'message') return { kind: 'message', message: end.message, attempt: await verdict(deps, turn, { kind: 'lost', reason: 'remote answered with a message, no task to read back' }) };
  const task = TaskView.safeParse(end.view);
  if (!task.success) return { kind: 'closed', attempt: await verdict(deps, turn, { kind: 'lost', reason: 'remote task is malformed' }) };
  if (end.kind === 'interrupted') return { kind: 'interrupted', attempt: await verdictInterrupted(deps, turn, end.view) };
  return { kind: 'closed', attempt: await verdict(deps, turn, { kind: 'task', task: task.data, fingerprint: fingerprint(task.data) }, end.view) };
}

async function followedElsewhere(deps: PathDeps, turn: Turn): Promise<boolean> {
  const row = await deps.store.work.get(turn.effect_id);
  return row !== undefined && row.lease_owner !== deps.node;
}

/** Runs `complete` to its end, discarding the events (a blocking caller, a background follow). */
export async function completeQuietly(deps: PathDeps, turn: Turn, sent: Sent | undefined, until: number, retryMs?: number): Promise<TurnEnd> {
  const it = complete(deps, turn, sent, until, retryMs);
  for (;;) {
    const step = await it.next();
    if (step.done) return step.value;
  }
}

/** Gives the turn's follow-up back to the queue, due after `delayMs`. */
export async function handOver(deps: Pick<PathDeps, 'store' | 'node' | 'clock'>, turn: Pick<Turn, 'effect_id'>, delayMs: number): Promise<void> {
  await deps.store.work.release(turn.effect_id, deps.node, utc(new Date(deps.clock.now().getTime() + delayMs)));
}

/**
 * While this node follows a turn: renews its lease, so no other node takes
 * it over, and — once the turn outlasts the fast path — records the remote
 * task id durably on its work row, so stopping, reassignment and another
 * node taking the turn over know the task the delegatee named (a quick turn
 * is settled by its verdict alone).
 */
function keepLease(deps: PathDeps, turn: Turn): { stop: () => void; lost: () => boolean } {
  let lost = false;
  const beat = setInterval(() => {
    const until = utc(new Date(deps.clock.now().getTime() + deps.follow.leaseMs));
    // False: the row is another node's now (or gone, its verdict committed); an unreachable store proves neither.
    deps.store.work.renew(turn.effect_id, deps.node, until).then((held) => (lost ||= !held), () => undefined);
  }, Math.max(250, Math.floor(deps.follow.leaseMs / 3)));
  const note = setTimeout(() => void noteRemoteTask(deps, turn).catch(() => undefined), deps.follow.recordTaskAfterMs);
  beat.unref();
  note.unref();
  return {
    stop: () => {
      clearInterval(beat);
      clearTimeout(note);
    },
    lost: () => lost,
  };
}

/**
 * Records the remote task id durably, once, on the turn's work row — not as
 * another attempt revision: an attempt is revised twice per turn, admitted
 * and closed, and the verdict copies the id onto the closing revision. A
 * follow-up's task is on the attempt already; on its row the id says that the
 * delegatee received this turn's message, so a node continuing the turn
 * knows it too (src/gateway/path/rebuild-turn.ts).
 */
export async function noteRemoteTask(deps: Pick<PathDeps, 'store'>, turn: Turn): Promise<void> {
  const taskId = turn.remoteTaskId;
  const skip = turn.followUp ? !turn.followUp.delivered : turn.attempt.body.remote.task_id !== undefined;
  if (!taskId || skip) return;
  await deps.store.work.noteRemoteTask(turn.effect_id, taskId);
}

/**
 * What the caller is told of a turn the delegatee did not execute: the
 * remote's own error, which the renderer relays by its code (and another
 * Baton's ADR-0014 code) but never its text (src/gateway/a2a-error.ts);
 * `unavailable` for a request that never arrived or an HTTP refusal.
 */
export function callerError(r: Exclude<RemoteResult, { kind: 'uncertain' }>): Error {
  if (r.kind === 'not_transmitted') return new BatonError('unavailable', `delegatee did not answer: ${r.reason}`, { transmitted: false });
  if (r.error instanceof RemoteRpcError) return r.error;
  return new BatonError('unavailable', `delegatee refused the request: ${r.reason}`, { transmitted: true, refused: true });
}
