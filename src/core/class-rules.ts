import { DEFAULT_CLASS_INDEX } from "./priority/priority-classes.ts";
import type { ClassRules, RequestRecord } from "./records.ts";

/**
 * Without priorities: one class, nothing held back, every program may be displaced, and the
 * queue head is overdue after the ageing bound (or the max pause, whichever is shorter).
 */
export function singleClassRules(state: {
  readonly parkedOrder: ReadonlyMap<string, RequestRecord>;
  readonly config: { readonly ageingMs: number; readonly maxPauseMs: number };
}): ClassRules {
  const { ageingMs, maxPauseMs } = state.config;
  const bound = Math.min(ageingMs > 0 ? ageingMs : Number.POSITIVE_INFINITY, maxPauseMs);
  return {
    overdueOrder: [DEFAULT_CLASS_INDEX],
    parked: () => state.parkedOrder.values(),
    overdueAfterMs: () => bound,
    hold: () => 0,
    mayDisplace: () => true,
  };
}
