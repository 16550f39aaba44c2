/**
 * The present step for a turn (DESIGN "The request path is one durable
 * state machine per attempt"): what the caller is answered once a turn
 * ended or was handed to the follower, and how a streamed turn is relayed
 * with Baton's ids — terminal and interrupted events only after the verdict.
 */
import { isInterrupted, isTerminal, stateOf } from '../../attempts/task-view.ts';
import type { AttemptBody } from '../../attempts/record.ts';
import type { JsonValue } from '../../records/strict-json.ts';
import { presentMessage, presentTask, withIds } from '../present.ts';
import type { FollowStep } from './follow.ts';
import { presentAttempt } from './present-attempt.ts';
import type { TurnEnd } from './run-turn.ts';
import { remoteWithTask, type Json, type Turn } from './turn.ts';

/** The caller's answer once a turn ended or was handed to the follower. */
export function answerOf(turn: Turn, end: TurnEnd, historyLength?: number): Json {
  if (end.kind === 'message') return { message: presentMessage(end.message as JsonValue, end.attempt.body) as Json };
  if (end.kind === 'pending') return { task: pendingTask(turn, end.view, end.lost) };
  return { task: presentAttempt(end.attempt.body, historyLength) };
}

/**
 * A task still under way: WORKING (or what the remote last said), with
 * Baton's ids. A reply that was lost says `unknown`, so the caller follows
 * up with GetTask instead of sending the effect again.
 */
export function pendingTask(turn: Turn, view: Json | undefined, lost?: true): Json {
  return presentTask(view ?? { status: { state: 'TASK_STATE_WORKING' } }, shownBody(turn), lost ? 'unknown' : undefined);
}

/**
 * Relays follow steps to a streaming caller; terminal and interrupted
 * events wait for the verdict. A caller that leaves mid-stream does not
 * leave the effect behind: the turn is followed to its verdict anyway.
 */
export async function* relayTurn(turn: Turn, it: AsyncGenerator<FollowStep, TurnEnd>, inBackground: (p: Promise<unknown>) => void): AsyncGenerator<Json> {
  let started = false;
  let lastAsTask = false;
  let ended = false;
  try {
    for (;;) {
      const step = await it.next();
      if (step.done) {
        ended = true;
        yield* finalEvents(turn, step.value, lastAsTask || !started);
        return;
      }
      const { event, view } = step.value;
      const state = stateOf(view);
      if (isTerminal(state) || isInterrupted(state)) {
        lastAsTask = event.task !== undefined;
        continue;
      }
      started = true;
      const body = shownBody(turn);
      if (event.task) yield { task: presentTask(view, body, undefined) };
      else if (event.artifactUpdate) yield { artifactUpdate: withIds(event.artifactUpdate, body) };
      else if (event.statusUpdate) yield { statusUpdate: withIds(event.statusUpdate, body) };
      else if (event.message) yield { message: withIds(event.message, body) };
    }
  } finally {
    if (!ended) inBackground(runToEnd(it));
  }
}

/** The last event of a relayed turn, after its verdict (as a task when the stream never started or ended on one). */
function* finalEvents(turn: Turn, end: TurnEnd, asTask: boolean): Generator<Json> {
  if (end.kind === 'message') yield { message: presentMessage(end.message as JsonValue, end.attempt.body) as Json };
  else if (end.kind === 'pending') yield { task: pendingTask(turn, end.view, end.lost) };
  else {
    const final = presentAttempt(end.attempt.body);
    yield asTask ? { task: final } : { statusUpdate: { taskId: final.id!, contextId: final.contextId!, status: final.status!, metadata: final.metadata! } };
  }
}

/**
 * The attempt as presentation needs it: with the delegatee's task id once
 * this turn learned it (before any revision records it), so every
 * occurrence of it is replaced by Baton's (src/gateway/present.ts).
 */
function shownBody(turn: Turn): AttemptBody {
  const body = turn.attempt.body;
  const remote = remoteWithTask(turn, body);
  return remote === body.remote ? body : { ...{}, ...body, remote };
}

/** Pulls a follow generator to its end, discarding its events (its caller left). */
async function runToEnd(it: AsyncGenerator<FollowStep, TurnEnd>): Promise<void> {
  for (let step = await it.next(); !step.done; step = await it.next());
}
