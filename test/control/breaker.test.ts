import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BreakerRules, DEFAULT_BREAKER_POLICY, type BreakerSignal } from '../../src/control/breaker.ts';

const outcome = (o: 'succeeded' | 'failed' | 'unknown' | 'cancelled', agent = 'card_a'): BreakerSignal => ({ kind: 'outcome', outcome: o, agent, delegation: 'dlg_1' });

describe('circuit-breaker rules (RW-003 §7.3)', () => {
  it('trips an agent after N consecutive failures, and a success resets the count', () => {
    const rules = new BreakerRules({ ...DEFAULT_BREAKER_POLICY, repeatedFailures: 3 });
    expect(rules.observe(outcome('failed'))).toBeUndefined();
    expect(rules.observe(outcome('failed'))).toBeUndefined();
    expect(rules.observe(outcome('succeeded'))).toBeUndefined();
    expect(rules.observe(outcome('failed'))).toBeUndefined();
    expect(rules.observe(outcome('failed', 'card_b'))).toBeUndefined(); // per agent
    expect(rules.observe(outcome('failed'))).toBeUndefined();
    expect(rules.observe(outcome('failed'))).toEqual({ scope: { kind: 'agent', id: 'card_a' }, trigger: 'repeated_tool_failure', reason: '3 failed attempts in a row' });
    expect(rules.observe(outcome('cancelled'))).toBeUndefined(); // a cancellation is no tool failure
  });

  it('trips on each single-event trigger it is configured for, and on nothing else', () => {
    const all = new BreakerRules({ ...DEFAULT_BREAKER_POLICY, triggers: [...DEFAULT_BREAKER_POLICY.triggers, 'unverifiable_effect', 'budget_exhaustion', 'policy_change', 'revocation'], staleInputs: 2 });
    expect(all.observe({ kind: 'refused', reason: 'budget', delegation: 'dlg_c', root: 'dlg_r' })).toMatchObject({ scope: { kind: 'delegation', id: 'dlg_r' }, trigger: 'budget_exhaustion' });
    expect(all.observe({ kind: 'refused', reason: 'budget', delegation: 'dlg_c', root: 'dlg_r', exhausted: 'dlg_c' })).toMatchObject({ scope: { id: 'dlg_c' } });
    expect(all.observe({ kind: 'card_rejected', agent: 'card_x', detail: 'actor changed' })).toMatchObject({ scope: { kind: 'agent', id: 'card_x' }, trigger: 'card_mismatch' });
    expect(all.observe({ kind: 'stopped', by: 'policy', delegation: 'dlg_c', detail: 'space:sp is now suspended' })).toMatchObject({ trigger: 'policy_change' });
    expect(all.observe({ kind: 'stopped', by: 'revocation', delegation: 'dlg_c', detail: 'revoked' })).toMatchObject({ trigger: 'revocation' });
    expect(all.observe({ kind: 'refused', reason: 'stale', delegation: 'dlg_c', root: 'dlg_r' })).toBeUndefined();
    expect(all.observe({ kind: 'refused', reason: 'stale', delegation: 'dlg_c', root: 'dlg_r' })).toMatchObject({ trigger: 'stale_input', scope: { id: 'dlg_c' } });
    expect(all.observe(outcome('unknown'))).toMatchObject({ trigger: 'unverifiable_effect', scope: { kind: 'delegation', id: 'dlg_1' } });
    // Off by default: tripping would move a head the unverified attempt fenced, or only repeat a block already in force.
    expect(new BreakerRules().observe(outcome('unknown'))).toBeUndefined();
    expect(new BreakerRules().observe({ kind: 'stopped', by: 'revocation', delegation: 'dlg_c', detail: '' })).toBeUndefined();
    expect(new BreakerRules().observe({ kind: 'refused', reason: 'budget', delegation: 'dlg_c', root: 'dlg_r' })).toBeUndefined();
    expect(new BreakerRules({ ...DEFAULT_BREAKER_POLICY, triggers: [] }).observe({ kind: 'card_rejected', agent: 'card_x', detail: '' })).toBeUndefined();
  });

  it('never trips on successes alone, whatever their number and agents', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('card_a', 'card_b', 'card_c'), { maxLength: 200 }), (agents) => {
        const rules = new BreakerRules();
        return agents.every((a) => rules.observe(outcome('succeeded', a)) === undefined);
      }),
    );
  });
});
