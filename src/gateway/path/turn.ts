/**
 * One turn of an attempt: a single admitted effect with its own reservation,
 * fence set and follow-up row (DESIGN "Turns own their reservations"). Every
 * later step — forward, follow, verify — is keyed by the turn, never by the
 * attempt's newest revision, so concurrent turns on one task never cross.
 */
import type { ControlBoundaryRef } from '../../control/fence.ts';
import type { ControlScopeRef } from '../../control/scope.ts';
import type { AcceptanceCriteria } from '../../attempts/outcome.ts';
import type { JsonValue } from '../../records/strict-json.ts';
import type { AttemptBody } from '../../attempts/record.ts';
import type { Attempt } from '../attempts.ts';
import type { ChainPlacement } from '../chain-placement.ts';
import type { RemoteFenceEntry } from '../../federation/head-statement.ts';
import { showsMessage } from '../../attempts/task-view.ts';

export type Json = { [key: string]: JsonValue };

/** Where a turn is sent and how its result is judged. */
export interface Target {
  delegatee_id: string;
  endpoint: string;
  headers: Record<string, string>;
  acceptance: AcceptanceCriteria;
  /** The delegatee's card says it streams (A2A capabilities.streaming). */
  streaming: boolean;
  /** The delegatee's card says it sends push notifications. */
  pushNotifications: boolean;
  /** Where the contract chain goes in what is sent (gateway/chain-placement.ts). */
  chainPlacement: ChainPlacement;
}

export interface Turn {
  /** The attempt as it was when this turn was admitted. */
  attempt: Attempt;
  effect_id: string;
  reservation_id: string;
  fence_set: ControlBoundaryRef[];
  /** Authority scopes re-checked after the effect (RW-003 §1.2). */
  scopes: ControlScopeRef[];
  /**
   * What this process's admission of the turn left: its reservation held,
   * with these amounts. A verdict starts from it instead of reading the
   * reservation back (issue #24); absent for a turn rebuilt from the store.
   */
  reserved?: { amounts: Record<string, string> };
  /** Separate stores: the upstream heads bound at admission, rechecked after read-back (issue #16). */
  remote_fence?: { subject: string; entries: RemoteFenceEntry[] };
  target: Target;
  /** The delegatee's task, once known (from the attempt, the reply, or a lookup by context). */
  remoteTaskId?: string;
  /**
   * A follow-up turn: its message, and whether the delegatee evidently
   * received it — it answered this turn's own send, or the task's history
   * holds the message. Until then a state of the shared task belongs to
   * another turn and is never this turn's outcome (issue #25 item 2).
   */
  followUp?: { messageId: string; delivered: boolean };
}

/**
 * Is a state of the delegatee's task this turn's result? Always for a first
 * turn (its task is in a context Baton named for it alone); for a follow-up
 * once the delegatee evidently received its message — remembered on the turn
 * the first time the task's history shows it (issue #25 item 2).
 */
export function heardIn(turn: Pick<Turn, 'followUp'>, view: Json): boolean {
  const own = turn.followUp;
  if (!own || own.delivered) return true;
  own.delivered = showsMessage(view, own.messageId);
  return own.delivered;
}

/** The attempt's remote facts with the delegatee's task id this turn learned, where no revision records it yet. */
export function remoteWithTask(turn: Pick<Turn, 'remoteTaskId'>, body: AttemptBody): AttemptBody['remote'] {
  return turn.remoteTaskId && !body.remote.task_id ? { ...{}, ...body.remote, task_id: turn.remoteTaskId } : body.remote;
}
