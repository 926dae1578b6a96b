import type { ClassRules } from "../records.ts";
import type { SchedulerState } from "../scheduler-state.ts";
import { holdFor } from "./class-room.ts";
import { CLASS_COUNT, type ClassIndex } from "./priority-classes.ts";
import type { PriorityState } from "./priority-state.ts";

/**
 * The class rules the core's passes call with priorities on (class-rules.ts):
 *   - overdue heads are checked lowest class first, so a starved bulk program is seated
 *     before the classes that keep overtaking it; each class is overdue after its starvation
 *     threshold (at most the max pause);
 *   - a class may take the room higher classes leave unused beyond their reservations only
 *     (class-room.ts);
 *   - room is made for a class from its own class and lower ones only (a starved bulk program
 *     never pauses an interactive one); `system` is never a victim (class-victims.ts).
 */
export function priorityRules(state: SchedulerState, pr: PriorityState): ClassRules {
  const order: ClassIndex[] = [];
  for (let c = CLASS_COUNT - 1; c >= 0; c--) order.push(c);
  const bounds = pr.config.classes.map((c) => Math.min(c.starvationMs, state.config.maxPauseMs));
  return {
    overdueOrder: order,
    parked: (cls) => pr.parked[cls].values(),
    overdueAfterMs: (cls) => bounds[cls],
    hold: (b, cls) => holdFor(state, b, cls),
    mayDisplace: (victim, cls) => victim.cls >= cls,
  };
}
