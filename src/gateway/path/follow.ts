/**
 * Step 6: follow the forwarded turn until the remote task is terminal or
 * interrupted (DESIGN "block at Baton"). A stream is read while it lasts; a
 * stream that breaks, or a delegatee that does not stream, is polled with
 * GetTask and exponential backoff. A task whose id never arrived is found by
 * the remote context Baton chose at admission. Nothing here decides an
 * outcome: the verdict does, after read-back (a stream past the turn's
 * bounds is judged here, as a lost turn). `until` bounds the wait, a
 * stream's too; what is not over by then is left to the durable follower
 * (src/gateway/follower.ts).
 */
import { digestOf } from '../../records/digest.ts';
import { isInterrupted, isTerminal, mergeArtifact, stateOf, TaskView } from '../../attempts/task-view.ts';
import { RemoteRpcError } from '../remote.ts';
import { parseSse } from '../sse.ts';
import { closeStream, finishStream, readerOf } from '../stream-end.ts';
import { parseEnvelope } from '../wire.ts';
import type { PathDeps } from './deps.ts';
import type { Forwarded } from './forward.ts';
import { heardIn, type Json, type Turn } from './turn.ts';

export type FollowEnd =
  | { kind: 'terminal'; view: Json }
  | { kind: 'interrupted'; view: Json }
  /** The remote answered with a Message: there is no task to read back (RW-003 §10.1). */
  | { kind: 'message'; message: Json }
  /** Not over by `until` (or the remote cannot be reached): the durable follower takes over. */
  | { kind: 'waiting'; reason: string; view?: Json }
  /** Hostile input after transmission (past the turn's bounds): judged as a lost turn, never released. */
  | { kind: 'lost'; reason: string };

/** One event as the remote sent it (remote ids still in it), with the view accumulated so far. */
export interface FollowStep {
  event: Json;
  view: Json;
}

type Deps = PathDeps;

export async function* follow(deps: Deps, turn: Turn, first: Exclude<Forwarded, { kind: 'failed' }> | undefined, until: number): AsyncGenerator<FollowStep, FollowEnd> {
  const view: Json = {};
  if (first?.kind === 'reply') {
    heard(turn);
    if (first.result.task === undefined) return first.result.message ? { kind: 'message', message: first.result.message as Json } : { kind: 'waiting', reason: 'remote answered with neither task nor message' };
    Object.assign(view, first.result.task as Json);
  } else if (first?.kind === 'stream') {
    const end = yield* readStream(deps, first.body, view, turn, until);
    if (end) return end;
  }
  noteTaskId(turn, view);
  const seen = settledState(turn, view);
  if (seen) return seen;
  return yield* poll(deps, turn, view, until);
}

/**
 * Reads SSE events into `view`; returns an end once the task is terminal or
 * interrupted, at `until`, or past the turn's bounds; undefined when the
 * stream stops early.
 */
async function* readStream(deps: Deps, body: AsyncIterable<Uint8Array>, view: Json, turn: Turn, until: number): AsyncGenerator<FollowStep, FollowEnd | undefined> {
  const deadline = cutAt(deps, body, until);
  const read = { events: 0, bytes: 0 };
  let settled = false;
  try {
    for await (const ev of parseSse(readerOf(body))) {
      const bound = overBound(deps, read, ev.data);
      if (bound) {
        closeStream(body);
        return { kind: 'lost', reason: `the delegatee's stream exceeded ${bound}` };
      }
      // Untrusted bytes are read strictly, once; an event Baton framed itself from what it read carries its envelope.
      const env = ev.envelope ?? parseEnvelope(ev.data);
      if (ev.event === 'error' || env.error !== undefined) throw new RemoteRpcError(-32603, 'delegatee stream failed');
      heard(turn);
      const result = env.result as Json;
      if (result.message && !view.id) {
        settled = true;
        return { kind: 'message', message: result.message as Json };
      }
      apply(view, result);
      noteTaskId(turn, view);
      yield { event: result, view };
      const end = settledState(turn, view);
      if (end) {
        settled = true;
        return end;
      }
    }
  } catch {
    // A broken stream says nothing about the effect: the task is read instead.
  } finally {
    deadline.clear();
    // Settled: the stream's end may still be on its way; its connection is kept for the next turn (stream-end.ts).
    if (settled) finishStream(body);
    else closeStream(body);
  }
  return deadline.past() ? { kind: 'waiting', reason: 'not finished within follow.blockingWaitMs', ...(view.id ? { view } : {}) } : undefined;
}

/**
 * A stream has no deadline of its own (issue #25 item 19): at `until` it is
 * closed, the caller is answered with the WORKING task and the durable
 * follower goes on (DESIGN "block at Baton"), as for a polled task.
 */
function cutAt(deps: Deps, body: AsyncIterable<Uint8Array>, until: number): { past: () => boolean; clear: () => void } {
  let past = false;
  const timer = setTimeout(() => {
    past = true;
    closeStream(body);
  }, Math.max(0, until - deps.clock.now().getTime()));
  timer.unref();
  return { past: () => past, clear: () => clearTimeout(timer) };
}

/** Counts one event against the turn's bounds; names the bound it exceeds, if any. */
function overBound(deps: Deps, read: { events: number; bytes: number }, data: string): string | undefined {
  const { maxTurnEvents, maxTurnBytes } = deps.remote.limits;
  read.events += 1;
  read.bytes += Buffer.byteLength(data);
  if (read.events > maxTurnEvents) return `remote.maxTurnEvents (${maxTurnEvents} events)`;
  if (read.bytes > maxTurnBytes) return `remote.maxTurnBytes (${maxTurnBytes} bytes)`;
  return undefined;
}

function apply(view: Json, result: Json): void {
  if (result.task) Object.assign(view, result.task as Json);
  else if (result.artifactUpdate) mergeArtifact(view, result.artifactUpdate as Json);
  else if (result.statusUpdate) {
    const u = result.statusUpdate as Json;
    view.id ??= u.taskId ?? null;
    view.contextId ??= u.contextId ?? null;
    view.status = u.status ?? null;
  }
}

function noteTaskId(turn: Turn, view: Json): void {
  if (!turn.remoteTaskId && typeof view.id === 'string' && view.id !== '') turn.remoteTaskId = view.id;
}

/** The delegatee answered this turn's own send: it received the message. */
function heard(turn: Turn): void {
  if (turn.followUp) turn.followUp.delivered = true;
}

/**
 * Terminal or interrupted — except an interrupted status this turn was
 * admitted to answer: a follow-up turn must not mistake the question it
 * replies to for a new one, nor another turn's question for its answer (a
 * follow-up whose send went unanswered owns the shared task's state only
 * once its history shows the message, turn.ts `heardIn`). A terminal state
 * always ends the follow: the verdict judges whose it is.
 */
function settledState(turn: Turn, view: Json): FollowEnd | undefined {
  const state = stateOf(view);
  if (isTerminal(state)) return { kind: 'terminal', view };
  if (!heardIn(turn, view)) return undefined;
  if (!isInterrupted(state)) return undefined;
  const answered = turn.attempt.body.observed;
  if (answered && answered.task_id === view.id && answered.status_digest === digestOf(view.status ?? null)) return undefined;
  return { kind: 'interrupted', view };
}

async function* poll(deps: Deps, turn: Turn, view: Json, until: number): AsyncGenerator<FollowStep, FollowEnd> {
  let delay = deps.follow.pollMinMs;
  let reason = 'not finished yet';
  while (deps.clock.now().getTime() < until) {
    try {
      turn.remoteTaskId ??= await findByContext(deps, turn);
      if (turn.remoteTaskId) {
        const task = TaskView.parse(await deps.remote.call(turn.target.endpoint, 'GetTask', { id: turn.remoteTaskId }, { headers: turn.target.headers })) as Json;
        const before = digestOf(view.status ?? null);
        Object.assign(view, task);
        const end = settledState(turn, view);
        if (end) return end;
        // A status read here is relayed as a task event: a subscriber whose stream the delegatee closed early still sees the turn move.
        if (digestOf(view.status ?? null) !== before) yield { event: { task }, view };
      } else reason = 'the delegatee has no task in this attempt\'s context yet';
    } catch (err) {
      reason = `delegatee unreachable: ${err instanceof Error ? err.message : String(err)}`;
    }
    const wait = Math.min(delay, until - deps.clock.now().getTime());
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    delay = Math.min(delay * 2, deps.follow.pollMaxMs);
  }
  return { kind: 'waiting', reason, ...(view.id ? { view } : {}) };
}

/** The task the delegatee created in the context Baton named for this attempt (A2A ListTasks by contextId). */
export async function findByContext(deps: Pick<PathDeps, 'remote'>, turn: Turn): Promise<string | undefined> {
  const contextId = turn.attempt.body.remote.context_id;
  if (!contextId) return undefined;
  const page = (await deps.remote.call(turn.target.endpoint, 'ListTasks', { contextId, pageSize: 10 }, { headers: turn.target.headers })) as { tasks?: Array<{ id?: unknown }> };
  const ids = (page.tasks ?? []).map((t) => t.id).filter((id): id is string => typeof id === 'string');
  // Baton names a fresh context per attempt: more than one task in it is not ours to pick from.
  return ids.length === 1 ? ids[0] : undefined;
}
