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

  it('refuses an ungated alias for a gated agent\'s card (a second delegatee id, same cardUrl), by requireApproval or by rule', () => {
    const gated = config({ delegatees: [{ ...base.delegatees[0], requireApproval: true }] });
    const alias = (d: Record<string, unknown> = {}) => ({ delegatees: [{ ...base.delegatees[0], requireApproval: true }, { id: 'billing2', cardUrl: 'https://billing.example/.well-known/agent-card.json', ...d }] });
    expect(unswappable(gated, config(alias()))).toEqual([expect.objectContaining({ severity: 'error', path: 'delegatees[1].cardUrl', message: expect.stringMatching(/gated delegatee "billing"/) })]);
    // The same URL written differently is the same card.
    expect(unswappable(gated, config({ delegatees: [{ ...base.delegatees[0], requireApproval: true }, { id: 'b2', cardUrl: 'https://BILLING.example:443/.well-known/agent-card.json' }] }))).toHaveLength(1);
    // An existing ungated delegatee re-pointed at the gated card.
    const two = config({ delegatees: [{ ...base.delegatees[0], requireApproval: true }, { id: 'search', cardUrl: 'https://search.example/card.json' }] });
    expect(unswappable(two, config(alias({ id: 'search' })))).toEqual([expect.objectContaining({ path: 'delegatees[1].cardUrl' })]);
    // Gated by a preset rule: an alias that no rule names side-steps it for that preset's callers.
    const approvals = { approvers: [{ operator: 'ops' }], rules: [{ delegatee: 'billing', preset: 'bulk', tier: 'T3_consequential_propose' }] };
    const byRule = config({ approvals, presets: [{ id: 'bulk' }] });
    expect(unswappable(byRule, config({ approvals, presets: [{ id: 'bulk' }], delegatees: [...base.delegatees, { id: 'billing2', cardUrl: base.delegatees[0]!.cardUrl }] }))).toEqual([expect.objectContaining({ path: 'delegatees[1].cardUrl' })]);
    // Not an alias: another card, or an alias at least as gated.
    expect(unswappable(gated, config({ delegatees: [{ ...base.delegatees[0], requireApproval: true }, { id: 'other', cardUrl: 'https://other.example/card.json' }] }))).toEqual([]);
  });

  it('refuses moving a caller off a gated preset; a move between ungated presets, or a new caller, is live', () => {
    const approvals = { approvers: [{ operator: 'ops' }], rules: [{ preset: 'guarded', tier: 'T3_consequential_propose' }] };
    const presets = [{ id: 'guarded' }, { id: 'standard' }, { id: 'other' }];
    const on = (preset: string, more: Record<string, unknown>[] = []) => config({ approvals, presets, callers: [{ ...base.callers[0], preset }, ...more] });
    expect(unswappable(on('guarded'), on('standard'))).toEqual([expect.objectContaining({ severity: 'error', path: 'callers[0].preset', message: expect.stringMatching(/from preset "guarded" to "standard".*"billing"/) })]);
    expect(unswappable(on('standard'), on('other'))).toEqual([]);
    expect(unswappable(on('standard'), on('guarded'))).toEqual([]); // onto a gate: stricter, not a side-step
    expect(unswappable(on('standard'), on('standard', [{ id: 'new', apiKeySha256: key, preset: 'standard' }]))).toEqual([]);
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
