/**
 * Whether a runtime reports `request_progress` after a request's completion tokens went from
 * `previous` to `count`: each time the count crosses a multiple of `every`. The HTTP relay and
 * the simulator both ask here, so the core sees progress at the same points from either.
 */
export function progressDue(previous: number, count: number, every: number): boolean {
  const step = Math.max(1, every);
  return Math.floor(count / step) > Math.floor(previous / step);
}
