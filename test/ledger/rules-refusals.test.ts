/**
 * ADR-0014 refusals of the pure budget rules, with the message a caller reads
 * beside the code and details (BatonError.toJSON carries all three), and the
 * internal guards of applyDeltas that keep a balance inside [0, ceiling].
 */
import { describe, expect, it } from 'vitest';
import { checkAmount, MAX_AMOUNT } from '../../src/ledger/amount.ts';
import { applyDeltas, nextReservationStatus, planCharge, planSettlement, type Balance } from '../../src/ledger/rules.ts';
import type { ErrorCode } from '../../src/errors.ts';
import { expectCode } from '../helpers/errors.ts';

const bal = (node_id: string, dimension: string, ceiling: bigint, consumed = 0n, reserved = 0n): Balance => ({ node_id, dimension, ceiling, consumed, reserved });
const json = (fn: () => unknown, code: ErrorCode) => expectCode(fn, code).toJSON();

describe('planCharge refusals', () => {
  const balances = [bal('root', 'tokens', 10n, 4n, 3n)];

  it('names what is wrong with the request', () => {
    expect(json(() => planCharge([], balances, new Map([['tokens', 1n]]), 'consume'), 'invalid_request')).toStrictEqual({ code: 'invalid_request', message: 'admission needs a budget chain', details: {} });
    expect(json(() => planCharge(['root'], balances, new Map(), 'consume'), 'invalid_request')).toStrictEqual({ code: 'invalid_request', message: 'a charge names at least one dimension', details: {} });
    expect(json(() => planCharge(['root'], balances, new Map([['tokens', 0n]]), 'consume'), 'invalid_request')).toStrictEqual({
      code: 'invalid_request',
      message: 'charge amounts are positive and representable',
      details: { dimension: 'tokens' },
    });
    expect(json(() => planCharge(['root'], balances, new Map([['gpu', 1n]]), 'consume'), 'deny')).toStrictEqual({
      code: 'deny',
      message: 'the root grants no authority in this budget dimension',
      details: { dimension: 'gpu' },
    });
  });

  it('an over-spend is "budget exhausted" with every failing node', () => {
    expect(json(() => planCharge(['root'], balances, new Map([['tokens', 4n]]), 'reserve'), 'limit_exceeded')).toStrictEqual({
      code: 'limit_exceeded',
      message: 'budget exhausted',
      details: { failures: [{ node_id: 'root', dimension: 'tokens', requested: '4', available: '3' }] },
    });
  });
});

describe('settlement refusals', () => {
  const charged = [{ node_id: 'root', dimension: 'tokens', consumed: 0n, reserved: 5n }];

  it('a resolved reservation is never resolved again', () => {
    expect(json(() => nextReservationStatus('settled', { kind: 'not_dispatched' }), 'invalid_request')).toStrictEqual({
      code: 'invalid_request',
      message: 'reservation is already resolved',
      details: { status: 'settled' },
    });
  });

  it('a measured amount is never negative, never above the reservation and never in an unreserved dimension', () => {
    const measured = (actual: [string, bigint][]) => () => planSettlement(['root'], charged, { kind: 'measured', actual: new Map(actual) });
    expect(json(measured([['tokens', -1n]]), 'invalid_request')).toStrictEqual({ code: 'invalid_request', message: 'measured amounts are not negative', details: { dimension: 'tokens' } });
    expect(json(measured([['tokens', 6n]]), 'invalid_request')).toStrictEqual({
      code: 'invalid_request',
      message: 'measured amount exceeds the reserved maximum',
      details: { dimension: 'tokens' },
    });
    expect(json(measured([['tokens', 5n], ['gpu', 1n]]), 'invalid_request')).toStrictEqual({
      code: 'invalid_request',
      message: 'measured a dimension that was not reserved',
      details: { dimension: 'gpu' },
    });
  });
});

describe('applyDeltas guards', () => {
  it('a delta for a row that does not exist is a TypeError naming the row, never a new balance', () => {
    expect(() => applyDeltas([bal('root', 'tokens', 10n)], [{ node_id: 'leaf', dimension: 'tokens', consumed: 1n, reserved: 0n }])).toThrow(
      new TypeError('no balance row for leaf/tokens'),
    );
  });

  it('a delta that would leave [0, ceiling] is a RangeError naming the row', () => {
    expect(() => applyDeltas([bal('root', 'tokens', 10n, 5n, 5n)], [{ node_id: 'root', dimension: 'tokens', consumed: 1n, reserved: 0n }])).toThrow(
      new RangeError('balance root/tokens would leave [0, ceiling]'),
    );
  });
});

describe('checkAmount', () => {
  it('an unrepresentable amount is limit_exceeded naming what it was ("amount" unless told)', () => {
    expect(checkAmount(MAX_AMOUNT)).toBe(MAX_AMOUNT);
    expect(json(() => checkAmount(MAX_AMOUNT + 1n), 'limit_exceeded')).toStrictEqual({ code: 'limit_exceeded', message: 'amount is not representable', details: { what: 'amount' } });
    expect(json(() => checkAmount(-1n, 'ceiling of x'), 'limit_exceeded')).toStrictEqual({
      code: 'limit_exceeded',
      message: 'ceiling of x is not representable',
      details: { what: 'ceiling of x' },
    });
  });
});
