/** ADR-0014 "Shared budgets and final admission": the pure budget arithmetic, at its exact boundaries. */
import { describe, expect, it } from 'vitest';
import { Amount, BudgetDimension, checkAmount, MAX_AMOUNT } from '../../src/ledger/amount.ts';
import { applyDeltas, checkChildCeilings, nextReservationStatus, planCharge, planSettlement, type Balance } from '../../src/ledger/rules.ts';
import { expectCode } from '../helpers/errors.ts';

const bal = (node_id: string, dimension: string, ceiling: bigint, consumed = 0n, reserved = 0n): Balance => ({ node_id, dimension, ceiling, consumed, reserved });
const chain = ['root', 'mid', 'leaf'];

describe('planCharge', () => {
  const balances = [bal('root', 'tokens', 100n, 30n, 20n), bal('mid', 'tokens', 60n, 0n, 10n), bal('leaf', 'tokens', 40n), bal('root', 'calls', 5n)];

  it('debits the root, every ancestor and the child together; a node without the dimension inherits', () => {
    expect(planCharge(chain, balances, new Map([['tokens', 40n]]), 'reserve')).toEqual([
      { node_id: 'root', dimension: 'tokens', consumed: 0n, reserved: 40n },
      { node_id: 'mid', dimension: 'tokens', consumed: 0n, reserved: 40n },
      { node_id: 'leaf', dimension: 'tokens', consumed: 0n, reserved: 40n },
    ]);
    expect(planCharge(chain, balances, new Map([['calls', 5n]]), 'consume')).toEqual([{ node_id: 'root', dimension: 'calls', consumed: 5n, reserved: 0n }]);
  });

  it('admits exactly what is available and refuses one more, naming every node that lacks it', () => {
    // root: 100 - 30 - 20 = 50 available; mid: 60 - 10 = 50; leaf: 40.
    expect(planCharge(['root', 'mid'], balances, new Map([['tokens', 50n]]), 'consume')).toHaveLength(2);
    const err = expectCode(() => planCharge(chain, balances, new Map([['tokens', 51n]]), 'consume'), 'limit_exceeded');
    expect(err.details.failures).toEqual([
      { node_id: 'root', dimension: 'tokens', requested: '51', available: '50' },
      { node_id: 'mid', dimension: 'tokens', requested: '51', available: '50' },
      { node_id: 'leaf', dimension: 'tokens', requested: '51', available: '40' },
    ]);
    const leafOnly = expectCode(() => planCharge(chain, balances, new Map([['tokens', 41n]]), 'consume'), 'limit_exceeded');
    expect(leafOnly.details.failures).toEqual([{ node_id: 'leaf', dimension: 'tokens', requested: '41', available: '40' }]);
  });

  it('a dimension the root does not declare is no authority at all', () => {
    const err = expectCode(() => planCharge(chain, [bal('leaf', 'gpu', 10n), ...balances], new Map([['gpu', 1n]]), 'consume'), 'deny');
    expect(err.details).toEqual({ dimension: 'gpu' });
  });

  it('refuses an empty chain, an empty charge and unrepresentable amounts; MAX_AMOUNT itself is representable', () => {
    expectCode(() => planCharge([], balances, new Map([['tokens', 1n]]), 'consume'), 'invalid_request');
    expectCode(() => planCharge(chain, balances, new Map(), 'consume'), 'invalid_request');
    for (const bad of [0n, -1n, MAX_AMOUNT + 1n]) expect(expectCode(() => planCharge(chain, balances, new Map([['tokens', bad]]), 'consume'), 'invalid_request').details).toEqual({ dimension: 'tokens' });
    const huge = [bal('root', 'bytes', MAX_AMOUNT)];
    expect(planCharge(['root'], huge, new Map([['bytes', MAX_AMOUNT]]), 'consume')).toEqual([{ node_id: 'root', dimension: 'bytes', consumed: MAX_AMOUNT, reserved: 0n }]);
    expect(planCharge(['root'], huge, new Map([['bytes', 1n]]), 'consume')).toHaveLength(1);
  });
});

describe('nextReservationStatus', () => {
  it('moves held and unknown reservations once; final states never move again', () => {
    for (const from of ['held', 'unknown'] as const) {
      expect(nextReservationStatus(from, { kind: 'unknown' })).toBe('unknown');
      expect(nextReservationStatus(from, { kind: 'not_dispatched' })).toBe('released');
      expect(nextReservationStatus(from, { kind: 'measured', actual: new Map() })).toBe('settled');
    }
    for (const from of ['settled', 'released', 'consumed'] as const) {
      expect(expectCode(() => nextReservationStatus(from, { kind: 'unknown' }), 'invalid_request').details).toEqual({ status: from });
    }
  });
});

describe('planSettlement', () => {
  const charged = [
    { node_id: 'root', dimension: 'tokens', consumed: 0n, reserved: 30n },
    { node_id: 'leaf', dimension: 'tokens', consumed: 0n, reserved: 30n },
    { node_id: 'root', dimension: 'calls', consumed: 0n, reserved: 2n },
  ];

  it('unknown keeps everything held; not dispatched releases all of it', () => {
    expect(planSettlement(chain, charged, { kind: 'unknown' })).toEqual([]);
    expect(planSettlement(chain, charged, { kind: 'not_dispatched' })).toEqual(charged.map((c) => ({ ...c, consumed: 0n, reserved: -c.reserved })));
  });

  it('measured consumes the actual amount and releases only the proven unused rest', () => {
    expect(planSettlement(chain, charged, { kind: 'measured', actual: new Map([['tokens', 30n]]) })).toEqual([
      { node_id: 'root', dimension: 'tokens', consumed: 30n, reserved: -30n },
      { node_id: 'leaf', dimension: 'tokens', consumed: 30n, reserved: -30n },
      { node_id: 'root', dimension: 'calls', consumed: 0n, reserved: -2n },
    ]);
  });

  it('settles only the nodes of the chain', () => {
    expect(planSettlement(['root'], charged, { kind: 'not_dispatched' }).map((d) => d.node_id)).toEqual(['root', 'root']);
  });

  it('refuses a measurement above the reserved maximum, a negative one, or one for a dimension never reserved', () => {
    expect(expectCode(() => planSettlement(chain, charged, { kind: 'measured', actual: new Map([['tokens', 31n]]) }), 'invalid_request').details).toEqual({ dimension: 'tokens' });
    expect(expectCode(() => planSettlement(chain, charged, { kind: 'measured', actual: new Map([['tokens', -1n]]) }), 'invalid_request').details).toEqual({ dimension: 'tokens' });
    expect(expectCode(() => planSettlement(chain, charged, { kind: 'measured', actual: new Map([['gpu', 0n]]) }), 'invalid_request').details).toEqual({ dimension: 'gpu' });
  });
});

describe('checkChildCeilings', () => {
  const parent = [{ name: 'tokens', unit: 'token', ceiling: 100n }];
  it('allows an equal or narrower child and reports every failure', () => {
    expect(checkChildCeilings(parent, [{ name: 'tokens', unit: 'token', ceiling: 100n }])).toEqual([]);
    expect(checkChildCeilings(parent, [])).toEqual([]);
    expect(
      checkChildCeilings(parent, [
        { name: 'tokens', unit: 'token', ceiling: 101n },
        { name: 'gpu', unit: 'second', ceiling: 1n },
      ]),
    ).toEqual([
      { dimension: 'tokens', reason: 'wider_than_parent' },
      { dimension: 'gpu', reason: 'parent_lacks_dimension' },
    ]);
    expect(checkChildCeilings(parent, [{ name: 'tokens', unit: 'kilotoken', ceiling: 1n }])).toEqual([{ dimension: 'tokens', reason: 'parent_lacks_dimension' }]);
  });
});

describe('applyDeltas', () => {
  it('folds deltas and refuses a row leaving [0, ceiling]', () => {
    const rows = [bal('root', 'tokens', 10n, 2n, 3n)];
    expect(applyDeltas(rows, [{ node_id: 'root', dimension: 'tokens', consumed: 3n, reserved: -3n }])).toEqual([bal('root', 'tokens', 10n, 5n, 0n)]);
    expect(applyDeltas(rows, [{ node_id: 'root', dimension: 'tokens', consumed: 5n, reserved: 0n }])).toEqual([bal('root', 'tokens', 10n, 7n, 3n)]);
    expect(rows).toEqual([bal('root', 'tokens', 10n, 2n, 3n)]); // inputs untouched
    // Exactly 0 and exactly the ceiling are inside the bounds.
    expect(applyDeltas([bal('root', 'tokens', 3n, 0n, 3n)], [{ node_id: 'root', dimension: 'tokens', consumed: 0n, reserved: -3n }])).toEqual([bal('root', 'tokens', 3n, 0n, 0n)]);
    expect(applyDeltas(rows, [{ node_id: 'root', dimension: 'tokens', consumed: 8n, reserved: -3n }])).toEqual([bal('root', 'tokens', 10n, 10n, 0n)]);
    expect(() => applyDeltas(rows, [{ node_id: 'root', dimension: 'tokens', consumed: 6n, reserved: 0n }])).toThrow(RangeError);
    expect(() => applyDeltas(rows, [{ node_id: 'root', dimension: 'tokens', consumed: 0n, reserved: -4n }])).toThrow(RangeError);
    expect(() => applyDeltas(rows, [{ node_id: 'root', dimension: 'tokens', consumed: -3n, reserved: 0n }])).toThrow(RangeError);
    expect(() => applyDeltas(rows, [{ node_id: 'leaf', dimension: 'tokens', consumed: 1n, reserved: 0n }])).toThrow(TypeError);
  });
});

describe('amounts', () => {
  it('parses decimal strings, safe integers and bigints up to 2^62 - 1', () => {
    expect(Amount.parse('0')).toBe(0n);
    expect(Amount.parse('4611686018427387903')).toBe(MAX_AMOUNT);
    expect(Amount.parse(42)).toBe(42n);
    expect(Amount.parse(7n)).toBe(7n);
    for (const bad of ['4611686018427387904', '-1', '01', '1.5', '', -1, 1.5, -1n, MAX_AMOUNT + 1n, Number.MAX_SAFE_INTEGER + 2]) expect(Amount.safeParse(bad).success, String(bad)).toBe(false);
  });

  it('checkAmount refuses what a counter could not hold', () => {
    expect(checkAmount(0n)).toBe(0n);
    expect(checkAmount(MAX_AMOUNT)).toBe(MAX_AMOUNT);
    expect(expectCode(() => checkAmount(MAX_AMOUNT + 1n, 'ceiling'), 'limit_exceeded').details).toEqual({ what: 'ceiling' });
    expectCode(() => checkAmount(-1n), 'limit_exceeded');
  });

  it('dimension names are lowercase identifiers and budget dimensions are strict', () => {
    expect(BudgetDimension.parse({ name: 'tokens', unit: 'token', ceiling: '5' })).toEqual({ name: 'tokens', unit: 'token', ceiling: 5n });
    for (const name of ['Tokens', '1tokens', '', 'a'.repeat(65)]) expect(BudgetDimension.safeParse({ name, unit: 'token', ceiling: '5' }).success, name).toBe(false);
    expect(BudgetDimension.safeParse({ name: 'a'.repeat(64), unit: 'token', ceiling: '5' }).success).toBe(true);
    expect(BudgetDimension.safeParse({ name: 'tokens', unit: '', ceiling: '5' }).success).toBe(false);
    expect(BudgetDimension.safeParse({ name: 'tokens', unit: 'token', ceiling: '5', extra: 1 }).success).toBe(false);
  });
});
