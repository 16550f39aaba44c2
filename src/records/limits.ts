/**
 * ADR-0014 "Lifetime, limits and errors" bounds that apply to every record at
 * the edge. Owner configuration may tighten them, never loosen them silently.
 */
export const RECORD_LIMITS = Object.freeze({
  /** Authority record: at most 64 KiB of normalised data. */
  maxRecordBytes: 64 * 1024,
  /** At most 256 action/resource scope entries. */
  maxScopeEntries: 256,
  /** At most 16 budget dimensions. */
  maxBudgetDimensions: 16,
  /** At most 2 KiB of UTF-8 purpose text. */
  maxPurposeBytes: 2 * 1024,
  /** External identifier fields: at most 2 KiB UTF-8 each. */
  maxIdentifierBytes: 2 * 1024,
  /** Nesting bound for strict JSON; deep nesting is a parser DoS, not data. */
  maxDepth: 64,
});

export type RecordLimits = typeof RECORD_LIMITS;
