/**
 * Budget amounts are non-negative integers in a dimension's trusted unit,
 * carried as bigint in the core and as decimal strings on the wire. The bound
 * keeps consumed + reserved representable as a signed 64-bit integer in both
 * stores, so a counter can never wrap (ADR-0014: "Counters cannot overflow or
 * become negative; unrepresentable charges are rejected").
 */
import { z } from 'zod';
import { limitExceeded } from '../errors.ts';

export const MAX_AMOUNT = (1n << 62n) - 1n;

/** Wire amount: a decimal string or a safe integer, never negative, never above MAX_AMOUNT. */
export const Amount = z
  .union([z.string().regex(/^(0|[1-9]\d{0,18})$/, 'expected a decimal integer'), z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER), z.bigint().nonnegative()])
  .transform((v) => BigInt(v))
  .refine((v) => v <= MAX_AMOUNT, 'amount is not representable');

export function checkAmount(v: bigint, what = 'amount'): bigint {
  if (v < 0n || v > MAX_AMOUNT) throw limitExceeded(`${what} is not representable`, { what });
  return v;
}

/** Dimension names are short, lowercase and stable; the unit is named separately. */
export const DimensionName = z.string().regex(/^[a-z][a-z0-9_.:-]{0,63}$/, 'dimension names are lowercase identifiers');

export const BudgetDimension = z.strictObject({
  name: DimensionName,
  unit: z.string().min(1).max(64),
  ceiling: Amount,
});
export type BudgetDimension = z.output<typeof BudgetDimension>;
