import type { SchedulerState } from "../scheduler-state.ts";
import { classUsedTokens, idleReservation, reservedTokens } from "./class-room.ts";
import { PRIORITY_CLASSES, type PriorityClass } from "./priority-classes.ts";

import type { PrioritySnapshot } from "./priority-views.ts";

function byClass<T>(f: (c: number) => T): Record<PriorityClass, T> {
  const out = {} as Record<PriorityClass, T>;
  PRIORITY_CLASSES.forEach((name, c) => {
    out[name] = f(c);
  });
  return out;
}

export function prioritySnapshot(state: SchedulerState): PrioritySnapshot | undefined {
  const pr = state.priority;
  if (pr === null) return undefined;
  return {
    queuePolicy: pr.config.queuePolicy,
    priorityPolicy: pr.config.priorityPolicy,
    classes: byClass((c) => {
      const k = pr.counters[c];
      return {
        settings: { ...pr.config.classes[c] },
        queued: pr.parked[c].size,
        admissions: { ...k.admissions },
        clamps: k.clamps,
        promotions: k.promotions,
        preemptions: k.preemptions,
      };
    }),
    backends: state.backends.map((b) => ({
      id: b.id,
      classes: byClass((c) => ({
        reservedTokens: reservedTokens(pr, b, c),
        usedTokens: classUsedTokens(state, b, c),
        heldTokens: idleReservation(state, pr, b, c),
      })),
    })),
  };
}
