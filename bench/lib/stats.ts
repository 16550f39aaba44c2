/** Small statistics helpers for the benchmark figures. */

export interface LatencySummary {
  n: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Nearest-rank percentile of an ascending-sorted array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function summarise(samples: readonly number[]): LatencySummary {
  const s = Float64Array.from(samples).sort();
  const arr = Array.from(s);
  const sum = arr.reduce((a, b) => a + b, 0);
  return {
    n: arr.length,
    meanMs: arr.length ? sum / arr.length : Number.NaN,
    p50Ms: percentile(arr, 50),
    p90Ms: percentile(arr, 90),
    p99Ms: percentile(arr, 99),
    maxMs: arr.length ? arr[arr.length - 1]! : Number.NaN,
  };
}

/** Rounds for display and JSON: 3 significant-ish decimals without noise. */
export function round(x: number, digits = 2): number {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
