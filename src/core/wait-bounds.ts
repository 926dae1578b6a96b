import { returnWaitOf } from "./pause-price.ts";
import type { RequestRecord } from "./records.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/**
 * How long a parked request waits before the resume pass makes room for it (resume.ts case
 * 1), the shortest that applies:
 *   1. its class's bound: the ageing bound, at most the max pause (class-rules.ts; with
 *      priorities on, the class's own);
 *   2. a new program's first request: the start bound. Smallest-first resume would otherwise
 *      hold a large new program behind smaller ones until the ageing bound, which under a burst
 *      (a batch of rollouts starting together) is minutes before its first answer;
 *   3. a program waiting to come back to the backend it was paused from: the bound the price
 *      of a pause there sets on a return (pause-price.ts; a host transfer's rotation bound,
 *      where its context comes back cheaply, so it takes its turn rather than wait for smaller
 *      ones).
 */
export function overdueBoundOf(state: SchedulerState, r: RequestRecord): number {
  return waitBoundOf(state, r).ms;
}

export type WaitBound = { ms: number; by: "class" | "new_program" | "rotation" };

/** The bound that applies to `r` (the shortest) and which case gave it. */
export function waitBoundOf(state: SchedulerState, r: RequestRecord): WaitBound {
  let out: WaitBound = { ms: state.rules.overdueAfterMs(r.cls), by: "class" };
  const p = r.program;
  if (p === null) return out;
  const start = state.config.newProgramStartMs;
  if (!p.placedOnce && start > 0 && start < out.ms) out = { ms: start, by: "new_program" }; // 2
  if (p.originBackend === null) return out;
  const back = returnWaitOf(state, state.backendById.get(p.originBackend));
  if (back !== null && back < out.ms) out = { ms: back, by: "rotation" }; // 3
  return out;
}

/**
 * The shortest bound any parked request of a class whose bound is `classBound` may have now
 * (the cases above, each at its shortest): parked requests are oldest first, so one not due
 * under it ends a search for due ones.
 */
export function shortestOverdueBound(state: SchedulerState, classBound: number): number {
  const start = state.config.newProgramStartMs;
  let bound = start > 0 ? Math.min(classBound, start) : classBound;
  for (const b of state.backends) {
    const back = returnWaitOf(state, b);
    if (back !== null && back < bound) bound = back;
  }
  return bound;
}
