/**
 * The median of the last `size` observations: the router-wide prior of a learned quantity
 * (step growth, tool time). A mean moves with every outlier (one 200 KB prompt made the old
 * average jump to the headroom cap for every new program); the median of a window moves at
 * most one rank per observation, however extreme it is, and forgets old values as the
 * workload changes. The window is also kept sorted, so an observation costs two binary
 * searches and one shift of the array, not a sort (this runs at every step end).
 */
export interface MedianWindow {
  readonly size: number;
  /** Observations in arrival order (a ring once full). */
  readonly values: number[];
  /** The same observations, ascending. */
  readonly sorted: number[];
  /** Next slot to overwrite once the window is full. */
  next: number;
  /** The current median; NaN before any observation. */
  median: number;
}

export function createMedianWindow(size: number): MedianWindow {
  return { size, values: [], sorted: [], next: 0, median: Number.NaN };
}

/** First index whose value is ≥ `value`. */
function lowerBound(sorted: number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Add one finite observation (others are ignored) and return the new median. */
export function observeMedian(w: MedianWindow, value: number): number {
  if (!Number.isFinite(value)) return w.median;
  const { sorted } = w;
  if (w.values.length < w.size) w.values.push(value);
  else {
    sorted.splice(lowerBound(sorted, w.values[w.next]), 1);
    w.values[w.next] = value;
    w.next = (w.next + 1) % w.size;
  }
  sorted.splice(lowerBound(sorted, value), 0, value);
  const mid = sorted.length >> 1;
  w.median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return w.median;
}
