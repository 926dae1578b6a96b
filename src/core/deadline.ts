/**
 * Every timeout is one deadline `start + duration`, due when `now >= deadline`, computed the
 * same way by the tick and by `nextDeadline()`: with `now − duration >= start` instead, a
 * runtime that ticks exactly at the reported deadline could find it not yet due by one
 * floating-point rounding step (the simulator hit this with fractional virtual times).
 */
export function deadlineOf(start: number, durationMs: number): number {
  return start + durationMs;
}
