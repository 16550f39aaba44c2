import { describe, expect, it } from 'vitest';
import { Config } from '../../src/config.ts';
import { restartKeys, unswappable } from '../../src/operator/reload.ts';

const key = 'a'.repeat(64);
const base = {
  delegatees: [{ id: 'billing', cardUrl: 'https://billing.example/.well-known/agent-card.json' }],
  callers: [{ id: 'app', apiKeySha256: key }],
};
const config = (over: Record<string, unknown> = {}) => Config.parse({ ...base, ...over });

describe('reload: what must not change on a running gateway', () => {
  it('accepts live changes that touch neither a gate nor federation terms', () => {
    const next = config({ delegatees: [...base.delegatees, { id: 'search', cardUrl: 'https://search.example/card.json' }], callers: [...base.callers, { id: 'other', apiKeySha256: key }] });
    expect(unswappable(config(), next)).toEqual([]);
  });

  it('refuses a human gate added, changed or removed (the gates read it once at boot: applying the rest would fail open)', () => {
    const gated = config({ delegatees: [{ ...base.delegatees[0], requireApproval: true }] });
    expect(unswappable(config(), gated)).toEqual([expect.objectContaining({ severity: 'error', path: 'delegatees[0].requireApproval' })]);
    expect(unswappable(gated, config())).toHaveLength(1);
    expect(unswappable(gated, config({ delegatees: [{ ...base.delegatees[0], requireApproval: 'T4_consequential_execute' }] }))).toHaveLength(1);
    // A new delegatee that arrives gated is refused too.
    expect(unswappable(config(), config({ delegatees: [...base.delegatees, { id: 'pay', cardUrl: 'https://pay.example/card.json', requireApproval: true }] }))).toEqual([expect.objectContaining({ path: 'delegatees[1].requireApproval' })]);
  });

  it("refuses a caller's upstream or downstream terms changing", () => {
    const down = config({ callers: [{ ...base.callers[0], downstream: { actorObjectId: 'actor_b' } }] });
    expect(unswappable(config(), down)).toEqual([expect.objectContaining({ severity: 'error', path: 'callers[0]' })]);
    expect(unswappable(down, config({ callers: [{ ...base.callers[0], downstream: { actorObjectId: 'actor_c' } }] }))).toHaveLength(1);
  });

  it('names the keys that need a restart and never the live ones', () => {
    expect(restartKeys(config(), config({ port: 9999, delegatees: [] }))).toEqual(['port']);
  });
});
