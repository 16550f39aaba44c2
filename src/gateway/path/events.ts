/**
 * Domain events of the request path (STYLE: cross-cutting policies hang off
 * the path, not woven into it). The path announces what happened; push
 * delivery, circuit breakers and escalations subscribe in the composition
 * root. A listener's failure is logged by the listener's owner and never
 * changes the path's result: the facts are already durable when announced.
 */
import type { BreakerSignal } from '../../control/breaker.ts';
import type { JsonValue } from '../../records/strict-json.ts';
import type { Attempt } from '../attempts.ts';

export type PathEvent =
  /** A verdict committed: the attempt's closing revision, and the read-back it agreed with. */
  | { type: 'closed'; attempt: Attempt; evidence?: JsonValue; reasons: readonly string[]; readback?: 'agreed' | 'disagreed' | 'unavailable' | 'not_applicable' }
  /** Admission committed: a reservation is held and the turn may be forwarded (ADR-0014 final admission). */
  | { type: 'admitted'; delegatee: string; operation: string }
  /** One upstream call to a delegatee ended: the forwarded send or the verification read-back, with its duration. */
  | { type: 'upstream'; call: 'send' | 'read_back'; delegatee: string; seconds: number; ok: boolean }
  /** The sweep stopped a running attempt because an authority stream moved; `seconds` since that move was recorded. */
  | { type: 'stopped'; cause: string; delegatee: string; seconds?: number }
  /** A turn not over when its caller was answered: the durable follower continues it (`lost`: the send's reply never came, so the caller was told `unknown`). */
  | { type: 'handed_over'; attempt_id: string; delegatee: string; reason: string; lost: boolean }
  /** A breaker-relevant fact (refused admission, rejected card, outcome, stopped attempt). */
  | { type: 'signal'; signal: BreakerSignal }
  /** Something Baton cannot settle itself, handed to the operator. */
  | { type: 'escalate'; kind: 'cancel_unacknowledged' | 'effect_unverifiable' | 'consumption_disputed'; subject: { attempt_id?: string; delegation_id?: string }; reasons: string[] };

type Listener = (event: PathEvent) => Promise<unknown> | unknown;

export class PathEvents {
  private readonly listeners: Listener[] = [];

  on(listener: Listener): void {
    this.listeners.push(listener);
  }

  /** Runs every listener and waits for them; failures are swallowed (each listener reports its own). */
  async emit(event: PathEvent): Promise<void> {
    await Promise.all(this.listeners.map(async (l) => l(event)).map((p) => p.catch(() => undefined)));
  }
}
