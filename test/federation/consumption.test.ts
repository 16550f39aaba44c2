import { describe, expect, it } from 'vitest';
import { CONSUMPTION_JWS_TYP, CONSUMPTION_RECEIPT_TYPE, ConsumptionReceipt, receiptMismatches, settleAgainst, settleWithout } from '../../src/federation/consumption.ts';

const digest = `sha256:${'a'.repeat(64)}`;
const receipt = (over: Partial<ConsumptionReceipt> = {}): ConsumptionReceipt => ({
  typ: CONSUMPTION_RECEIPT_TYPE,
  iss: 'actor_baton_b',
  aud: 'actor_baton_a',
  subject: 'dlg_leaf',
  task_id: 'att_b1',
  effect_id: 'eff_b1',
  receipt_ref: { object_id: 'rcp_b1', revision_id: 'rev_b1', content_digest: digest },
  status: 'settled',
  consumed: { invocations: '1' },
  issued_at: '2026-12-03T10:00:00.000Z',
  ...over,
});

describe('consumption receipts: the upstream settles by them, never above its reservation', () => {
  it('a claim within the reservation settles at the claim, per dimension', () => {
    expect(settleAgainst({ invocations: '1', tokens: '100' }, { invocations: '1', tokens: '40' })).toEqual({ settled: { invocations: '1', tokens: '40' }, over: [] });
  });

  it('a dimension the downstream did not consume settles at 0', () => {
    expect(settleAgainst({ invocations: '1', tokens: '100' }, { invocations: '1' })).toEqual({ settled: { invocations: '1', tokens: '0' }, over: [] });
  });

  it('a claim above the reservation is capped at it and named', () => {
    expect(settleAgainst({ invocations: '1' }, { invocations: '6' })).toEqual({ settled: { invocations: '1' }, over: ['invocations'] });
  });

  it('a claim on a dimension that was not reserved settles nothing on it and is named', () => {
    expect(settleAgainst({ invocations: '1' }, { invocations: '1', gpu: '3' })).toEqual({ settled: { invocations: '1' }, over: ['gpu'] });
  });

  it('without a usable receipt the whole reservation is settled as consumed', () => {
    expect(settleWithout({ invocations: '2' }, 'refused', 'bad signature')).toEqual({ status: 'refused', settled: { invocations: '2' }, reason: 'bad signature' });
  });

  it('the receipt must name the right parties, delegation and task', () => {
    const e = { iss: 'actor_baton_b', aud: 'actor_baton_a', subject: 'dlg_leaf', task_id: 'att_b1' };
    expect(receiptMismatches(receipt(), e)).toEqual([]);
    expect(receiptMismatches(receipt({ aud: 'actor_baton_c', task_id: 'att_b2' }), e)).toEqual(['audience', 'task']);
    expect(receiptMismatches(receipt({ iss: 'actor_baton_x', subject: 'dlg_other' }), e)).toEqual(['issuer', 'delegation']);
  });

  it('amounts are non-negative decimal integers; unknown members are refused', () => {
    expect(ConsumptionReceipt.safeParse(receipt()).success).toBe(true);
    for (const amount of ['0', '10', '905', '1'.repeat(31)]) expect(ConsumptionReceipt.safeParse(receipt({ consumed: { tokens: amount } })).success, amount).toBe(true);
    for (const amount of ['', '01', '1'.repeat(32), '1a']) expect(ConsumptionReceipt.safeParse(receipt({ consumed: { tokens: amount } })).success, amount).toBe(false);
    expect(ConsumptionReceipt.safeParse(receipt({ consumed: { invocations: '-1' } })).success).toBe(false);
    expect(ConsumptionReceipt.safeParse(receipt({ consumed: { invocations: '1.5' } })).success).toBe(false);
    expect(ConsumptionReceipt.safeParse({ ...receipt(), extra: true }).success).toBe(false);
  });

  it('a receipt reports one of three resolutions, under fixed wire types', () => {
    for (const status of ['settled', 'consumed', 'released'] as const) expect(ConsumptionReceipt.safeParse(receipt({ status })).success, status).toBe(true);
    expect(ConsumptionReceipt.safeParse(receipt({ status: 'refunded' as never })).success).toBe(false);
    expect(CONSUMPTION_RECEIPT_TYPE).toBe('baton.consumption_receipt/v1');
    expect(CONSUMPTION_JWS_TYP).toBe('baton-consumption-receipt+jws');
  });
});
