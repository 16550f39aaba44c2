/**
 * Automatic circuit breakers: the dispatcher reports signals, the rules
 * (src/control/breaker.ts) decide, and a trip is the same operator action a
 * human takes — event, checkpoints, escalation — recorded as Baton's. Trips
 * run one at a time, off the request path, and a scope already tripped is
 * not tripped again.
 */
import type { BreakerRules, BreakerSignal, Trip } from '../control/breaker.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../store/port.ts';

export class BreakerMonitor {
  private queue: Promise<void> = Promise.resolve();
  private pending = 0;

  constructor(
    private readonly deps: {
      rules: BreakerRules;
      store: Store;
      spaceId: string;
      logger: Logger;
      trip: (t: Trip) => Promise<unknown>;
    },
  ) {}

  signal(s: BreakerSignal): void {
    const trip = this.deps.rules.observe(s);
    if (!trip) return;
    if (this.pending > 100) {
      // A storm of signals must not queue without bound; what is dropped is said.
      this.deps.logger.warn({ scope: `${trip.scope.kind}:${trip.scope.id}`, trigger: trip.trigger }, 'circuit breaker trip dropped: too many pending');
      return;
    }
    this.pending++;
    this.queue = this.queue
      .then(async () => {
        const head = await this.deps.store.control.head({ space_id: this.deps.spaceId, scope_kind: trip.scope.kind, scope_id: trip.scope.id });
        // Only an active scope is tripped: one already tripped, suspended, revoked or expired blocks effects as it is.
        if (!head || head.state !== 'active') return;
        await this.deps.trip(trip);
        this.deps.logger.warn({ scope: `${trip.scope.kind}:${trip.scope.id}`, trigger: trip.trigger, reason: trip.reason }, 'circuit breaker tripped');
      })
      .catch((err) => this.deps.logger.warn({ err: err instanceof Error ? err.message : String(err), trigger: trip.trigger }, 'circuit breaker trip failed'))
      .finally(() => void this.pending--);
  }

  /** Resolves when every queued trip has run (tests, shutdown). */
  idle(): Promise<void> {
    return this.queue;
  }
}
