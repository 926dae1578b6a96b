/**
 * The median of the last `size` observations: the router-wide prior of a learned quantity
 * (step growth, tool time). A mean moves with every outlier (one 200 KB prompt made the old
 * average jump to the headroom cap for every new program); the median of a window moves at
 * most one rank per observation, however extreme it is, and forgets old values as the
 * workload changes. Sorting a copy per observation costs O(size log size) at step ends only.
 */
export interface MedianWindow {
  readonly size: number;
  readonly values: number[];
  /** Next slot to overwrite once the window is full. */
  next: number;
  /** The current median; NaN before any observation. */
  median: number;
}

export function createMedianWindow(size: number): MedianWindow {
  return { size, values: [], next: 0, median: Number.NaN };
}

/** Add one finite observation (others are ignored) and return the new median. */
export function observeMedian(w: MedianWindow, value: number): number {
  if (!Number.isFinite(value)) return w.median;
  if (w.values.length < w.size) w.values.push(value);
  else {
    w.values[w.next] = value;
    w.next = (w.next + 1) % w.size;
  }
  const sorted = w.values.slice().sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  w.median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return w.median;
}
