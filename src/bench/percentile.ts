/**
 * Percentiles by linear interpolation between closest ranks (NumPy's default, "type 7"), so
 * p50 of [1, 2, 3, 4] is 2.5 and every percentile of one value is that value. Every figure the
 * bench, the simulator and the scripts print goes through this one rule: the same samples give
 * the same p99 in every table, whichever script printed it. `q` is a percent (0–100).
 */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  if (q <= 0) return sorted[0];
  if (q >= 100) return sorted[sorted.length - 1];
  const rank = (q / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}

/** `percentile` of values in any order (a sorted copy; the input is left as it is). */
export function percentileOf(values: readonly number[], q: number): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    q,
  );
}

/** The arithmetic mean; NaN of no values. */
export const mean = (values: readonly number[]): number =>
  values.reduce((a, x) => a + x, 0) / values.length;

/** The median by the same rule: of an even count, the mean of the two middle values. */
export const median = (values: readonly number[]): number => percentileOf(values, 50);

export interface Summary {
  count: number;
  mean: number;
  min: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  max: number;
  /** Population standard deviation. */
  stdev: number;
}

/** Summary of a sample; an empty sample gives count 0 and NaN everywhere else. */
export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const avg = n === 0 ? Number.NaN : mean(sorted);
  const variance = n === 0 ? Number.NaN : sorted.reduce((s, v) => s + (v - avg) ** 2, 0) / n;
  return {
    count: n,
    mean: avg,
    min: n === 0 ? Number.NaN : sorted[0],
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: n === 0 ? Number.NaN : sorted[n - 1],
    stdev: Math.sqrt(variance),
  };
}
