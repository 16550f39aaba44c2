/**
 * SubscribeToTask (A2A §3.1.6, TCK STREAM-SUB-002): a subscription follows
 * the task, not one turn. An open turn's remote stream is relayed with
 * Baton's ids; a task between turns (interrupted: no open turn) answers its
 * snapshot and stays open until the caller's next turn is admitted — on any
 * node — then relays that turn, until the task is terminal. Waiting reads
 * the store (work rows, attempt revisions) with backoff, never process
 * memory, and is bounded by `follow.blockingWaitMs` (issue #25 item 5).
 */
import type { Attempt } from '../attempts.ts';
import { RemoteRpcError } from '../remote.ts';
import { toCallerError } from '../wire.ts';
import type { PathDeps } from './deps.ts';
import { findByContext } from './follow.ts';
import { presentAttempt } from './present-attempt.ts';
import { relayTurn } from './present-turn.ts';
import { rebuildTurn } from './rebuild-turn.ts';
import { complete, type Sent } from './run-turn.ts';
import type { Json, Turn } from './turn.ts';

type WorkRows = Awaited<ReturnType<PathDeps['store']['work']['ofAttempt']>>;

/** `caller`: the subscriber's connection; the delegatee's stream relayed to it ends when it leaves (remote.ts StreamOptions). */
export async function* subscribeTask(deps: PathDeps, first: Attempt, inBackground: (p: Promise<unknown>) => void, caller?: AbortSignal): AsyncGenerator<Json> {
  // Waits for a next turn start only before this; a turn relayed has its own bound (complete's `until`).
  const deadline = deps.clock.now().getTime() + deps.follow.blockingWaitMs;
  let attempt = first;
  let shown: string | undefined;
  let relayed: string | undefined;
  for (;;) {
    const rows = attempt.body.state === 'closed' ? [] : await deps.store.work.ofAttempt(attempt.record_id);
    const state = stateKey(attempt, rows);
    const open = rows[rows.length - 1];
    const turn = open && open.effect_id !== relayed ? await openTurn(deps, open) : undefined;
    if (turn) {
      relayed = turn.effect_id;
      yield* relayUpstream(deps, turn, inBackground, caller);
      attempt = await deps.attempts.latest(attempt);
      shown = attempt.revision_id; // the relay's last event was this revision's state
    } else if (shown !== attempt.revision_id) {
      shown = attempt.revision_id;
      yield { task: presentAttempt(attempt.body) };
    }
    if (attempt.body.state === 'closed') return;
    const next = await nextChange(deps, attempt, state, deadline);
    if (!next) return;
    attempt = next;
  }
}

/** The open turn rebuilt from its work row, when the delegatee's task id is known (else it is not ours to subscribe to yet). */
async function openTurn(deps: PathDeps, row: WorkRows[number]): Promise<Turn | undefined> {
  const turn = await rebuildTurn(deps, row);
  if (turn) turn.remoteTaskId ??= await findByContext(deps, turn).catch(() => undefined);
  return turn?.remoteTaskId ? turn : undefined;
}

/**
 * The turn's remote events with Baton's ids; its terminal or interrupted
 * event only after the verdict. A delegatee that answers the subscription
 * with an error (its turn already ended, it does not stream) is read instead.
 */
async function* relayUpstream(deps: PathDeps, turn: Turn, inBackground: (p: Promise<unknown>) => void, caller: AbortSignal | undefined): AsyncGenerator<Json> {
  let sent: Sent | undefined;
  try {
    sent = { kind: 'stream', body: (await deps.remote.stream(turn.target.endpoint, 'SubscribeToTask', { id: turn.remoteTaskId }, turn.target.headers, caller ? { caller } : {})).body };
  } catch (err) {
    if (!(err instanceof RemoteRpcError)) throw toCallerError(err);
  }
  yield* relayTurn(turn, complete(deps, turn, sent, deps.clock.now().getTime() + deps.follow.blockingWaitMs), inBackground);
}

/** What a subscriber waits to see change: the attempt's revision, its open turns and the task ids they named. */
function stateKey(attempt: Attempt, rows: WorkRows): string {
  return [attempt.revision_id, ...rows.map((r) => `${r.effect_id}:${r.remote_task_id ?? ''}`)].join('|');
}

/** Polls the store with backoff until the attempt or its open turns change; undefined once `deadline` passed. */
async function nextChange(deps: PathDeps, attempt: Attempt, seen: string, deadline: number): Promise<Attempt | undefined> {
  let delay = deps.follow.pollMinMs;
  for (;;) {
    const wait = Math.min(delay, deadline - deps.clock.now().getTime());
    if (wait <= 0) return undefined;
    await new Promise((r) => setTimeout(r, wait));
    delay = Math.min(delay * 2, deps.follow.pollMaxMs);
    const latest = await deps.attempts.latest(attempt);
    const rows = latest.body.state === 'closed' ? [] : await deps.store.work.ofAttempt(latest.record_id);
    if (stateKey(latest, rows) !== seen) return latest;
  }
}
