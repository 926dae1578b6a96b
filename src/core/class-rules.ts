import { type ClassIndex, DEFAULT_CLASS_INDEX } from "./priority/priority-classes.ts";
import type { BackendBook, ProgramRecord, RequestRecord } from "./scheduler-state.ts";

/**
 * What priority classes change in the core's passes, behind one narrow interface: the resume
 * pass, the arrival cases and the overdue seat call these and nothing else of the class
 * machinery. Without priorities everything is one class (`default`) and these are the
 * single-class rules below; src/core/priority/priority-rules.ts gives the class rules.
 */
export interface ClassRules {
  /** The classes whose queue heads are checked for overdue waits, in that order. */
  readonly overdueOrder: readonly ClassIndex[];
  /** The oldest parked request of class `cls`, or undefined. */
  head(cls: ClassIndex): RequestRecord | undefined;
  /** How long class `cls`'s head may wait before room is made for it (ms; ∞ = never). */
  overdueAfterMs(cls: ClassIndex): number;
  /** Room on `b` held back from class `cls` (higher classes' idle reservations). */
  hold(b: BackendBook, cls: ClassIndex): number;
  /** Whether `victim` may be paused to make room for a class-`cls` program. */
  mayDisplace(victim: ProgramRecord, cls: ClassIndex): boolean;
}

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
    head() {
      for (const r of state.parkedOrder.values()) return r;
      return undefined;
    },
    overdueAfterMs: () => bound,
    hold: () => 0,
    mayDisplace: () => true,
  };
}
