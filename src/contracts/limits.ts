/**
 * Contract limits (RW-003 §2 Duration/MoneyLimit, §5.1 limits) and typed
 * budget ceilings (ADR-0014 "ledgerRef, budgetCeilings"). Every count is
 * finite; money and ceilings are string-encoded non-negative integers compared
 * as bigint so no amount ever rounds through a float.
 */
import { z } from 'zod';
import { UtcTime } from '../records/time.ts';

/** A finite non-negative count. */
export const Count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

const UNIT_SECONDS = { s: 1, min: 60, h: 3600, d: 86_400 } as const;
/** RW-003 §2 Duration: bounded, with an explicit unit. */
export const Duration = z.strictObject({
  value: z.number().int().min(0).max(1_000_000_000),
  unit: z.enum(['s', 'min', 'h', 'd']),
});
export type Duration = z.infer<typeof Duration>;

export function durationSeconds(d: Duration): number {
  return d.value * UNIT_SECONDS[d.unit];
}

/** Non-negative integer as decimal text without leading zeros, ≤ 19 digits. */
export const IntegerText = z.string().regex(/^(0|[1-9][0-9]{0,18})$/, 'expected a non-negative integer string');

/**
 * RW-003 §2 MoneyLimit in integer minor units of an ISO 4217 currency. The
 * field being absent means no spending authority, never unlimited spend.
 */
export const MoneyLimit = z.strictObject({
  amount_minor: IntegerText,
  currency: z.string().regex(/^[A-Z]{3}$/, 'expected an ISO 4217 currency code'),
});
export type MoneyLimit = z.infer<typeof MoneyLimit>;

/** The count limits, in the order failures report them. */
export const COUNT_LIMITS = [
  ['max_invocations', 'invocations'],
  ['max_protected_operations', 'protected_operations'],
  ['max_tokens', 'tokens'],
  ['max_tool_calls', 'tool_calls'],
  ['max_retries', 'retries'],
  ['max_concurrency', 'concurrency'],
] as const;
export type CountLimitKey = (typeof COUNT_LIMITS)[number][0];

export const Limits = z.strictObject({
  /** Fixed, non-renewable horizon (ADR-0014 notAfter). */
  not_after: UtcTime,
  max_duration: Duration,
  max_invocations: Count,
  max_protected_operations: Count,
  max_tokens: Count,
  max_tool_calls: Count,
  max_retries: Count,
  max_concurrency: Count,
  spend: MoneyLimit.optional(),
});
export type Limits = z.infer<typeof Limits>;

/** One ADR-0014 budget dimension: trusted unit, finite integer ceiling. */
export const BudgetCeiling = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9_.]{0,63}$/),
  unit: z.string().regex(/^[a-z][a-z0-9_./-]{0,31}$/),
  ceiling: IntegerText,
});
export type BudgetCeiling = z.infer<typeof BudgetCeiling>;

export const BudgetCeilings = z
  .array(BudgetCeiling)
  .max(1024)
  .refine((dims) => new Set(dims.map((d) => d.name)).size === dims.length, 'budget dimension names must be unique');

/** Why `child` spend is not within `parent` spend, or undefined when it is. */
export function spendFailure(parent: MoneyLimit | undefined, child: MoneyLimit | undefined): string | undefined {
  if (child === undefined) return undefined;
  if (parent === undefined) return 'parent has no spending authority';
  if (child.currency !== parent.currency) return `currency ${child.currency} differs from parent ${parent.currency}`;
  if (BigInt(child.amount_minor) > BigInt(parent.amount_minor)) return 'spend exceeds parent';
  return undefined;
}
