/**
 * Circuit-breaker rules (RW-003 §7.3), free of I/O: which observed signal
 * trips which scope's breaker. Repetition-based triggers count per scope and
 * reset on a success; single-event triggers trip at once. The monitor that
 * feeds signals and performs trips lives in src/operator/breakers.ts.
 */
import type { Outcome } from './event.ts';

export const BREAKER_TRIGGERS = [
  'budget_exhaustion',
  'repeated_tool_failure',
  'card_mismatch',
  'policy_change',
  'revocation',
  'stale_input',
  'unverifiable_effect',
  'operator',
] as const;
export type BreakerTrigger = (typeof BREAKER_TRIGGERS)[number];

export interface BreakerPolicy {
  /** Triggers that trip automatically; 'operator' is always manual. */
  triggers: readonly BreakerTrigger[];
  /** Consecutive failed or lost outcomes at one delegatee before its agent breaker trips. */
  repeatedFailures: number;
  /** Consecutive stale-fence refusals under one delegation before its breaker trips. */
  staleInputs: number;
}

/**
 * On by default: the triggers that point at one misbehaving agent or a
 * racing authority. Off by default, available by configuration:
 * - unverifiable_effect: a trip moves a head the unverified attempt fenced,
 *   so its reconciliation could never verify it; it is escalated instead;
 * - revocation, policy_change: the change itself already blocks every
 *   effect under it, and tripping each descendant would only add noise;
 * - budget_exhaustion: a spent budget already refuses new effects; tripping
 *   would also cancel siblings admitted within it.
 */
export const DEFAULT_BREAKER_POLICY: BreakerPolicy = {
  triggers: ['repeated_tool_failure', 'card_mismatch', 'stale_input'],
  repeatedFailures: 3,
  staleInputs: 3,
};

export type BreakerSignal =
  /** A projected outcome of an attempt at a delegatee, under a delegation. */
  | { kind: 'outcome'; outcome: Outcome; agent: string; delegation: string }
  /** Admission refused: the budget is spent, or the fences were stale. */
  | { kind: 'refused'; reason: 'budget' | 'stale'; delegation: string; root: string; exhausted?: string }
  /** The delegatee's card failed verification or changed identity. */
  | { kind: 'card_rejected'; agent: string; detail: string }
  /** A running attempt was stopped because an authority stream moved. */
  | { kind: 'stopped'; by: 'revocation' | 'policy'; delegation: string; detail: string };

export interface Trip {
  scope: { kind: 'agent' | 'delegation'; id: string };
  trigger: BreakerTrigger;
  reason: string;
}

export class BreakerRules {
  private readonly failures = new Map<string, number>();
  private readonly stale = new Map<string, number>();

  constructor(private readonly policy: BreakerPolicy = DEFAULT_BREAKER_POLICY) {}

  /** The trip this signal calls for, if any. */
  observe(s: BreakerSignal): Trip | undefined {
    const trip = this.decide(s);
    return trip && this.policy.triggers.includes(trip.trigger) ? trip : undefined;
  }

  private decide(s: BreakerSignal): Trip | undefined {
    switch (s.kind) {
      case 'outcome': {
        if (s.outcome === 'unknown' || s.outcome === 'partially_applied') {
          return { scope: { kind: 'delegation', id: s.delegation }, trigger: 'unverifiable_effect', reason: `an effect could not be verified (${s.outcome})` };
        }
        if (s.outcome === 'succeeded') {
          this.failures.delete(s.agent);
          return undefined;
        }
        if (s.outcome !== 'failed') return undefined;
        const n = (this.failures.get(s.agent) ?? 0) + 1;
        this.failures.set(s.agent, n);
        if (n < this.policy.repeatedFailures) return undefined;
        this.failures.delete(s.agent);
        return { scope: { kind: 'agent', id: s.agent }, trigger: 'repeated_tool_failure', reason: `${n} failed attempts in a row` };
      }
      case 'refused': {
        // The highest node in the chain that is out of budget: a leaf's own ceiling trips the leaf, not the root.
        if (s.reason === 'budget') return { scope: { kind: 'delegation', id: s.exhausted ?? s.root }, trigger: 'budget_exhaustion', reason: `budget exhausted at ${s.exhausted ?? s.root}` };
        const n = (this.stale.get(s.delegation) ?? 0) + 1;
        this.stale.set(s.delegation, n);
        if (n < this.policy.staleInputs) return undefined;
        this.stale.delete(s.delegation);
        return { scope: { kind: 'delegation', id: s.delegation }, trigger: 'stale_input', reason: `${n} admissions refused on stale fences` };
      }
      case 'card_rejected':
        return { scope: { kind: 'agent', id: s.agent }, trigger: 'card_mismatch', reason: s.detail };
      case 'stopped':
        return { scope: { kind: 'delegation', id: s.delegation }, trigger: s.by === 'policy' ? 'policy_change' : 'revocation', reason: s.detail };
    }
  }
}
