/**
 * Percentiles by linear interpolation between closest ranks (NumPy's default, "type 7"), so
 * p50 of [1, 2, 3, 4] is 2.5 and every percentile of one value is that value.
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
  const mean = n === 0 ? Number.NaN : sorted.reduce((s, v) => s + v, 0) / n;
  const variance = n === 0 ? Number.NaN : sorted.reduce((s, v) => s + (v - mean) ** 2, 0) / n;
  return {
    count: n,
    mean,
    min: n === 0 ? Number.NaN : sorted[0],
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: n === 0 ? Number.NaN : sorted[n - 1],
    stdev: Math.sqrt(variance),
  };
}
