import type { SchedulerState } from "../scheduler-state.ts";
import { classUsedTokens, idleReservation, reservedTokens } from "./class-room.ts";
import { PRIORITY_CLASSES, type PriorityClass } from "./priority-classes.ts";
import type { PriorityClassSettings, PriorityPolicy, QueuePolicy } from "./priority-config.ts";
import type { AdmissionOutcome } from "./priority-state.ts";

/** Read-only priority views for the admin routes and the metrics adapter (label `class`). */

export interface ClassView {
  settings: PriorityClassSettings;
  /** Requests of this class parked now. */
  queued: number;
  /** Monotonic: requests by admission outcome. */
  admissions: Record<AdmissionOutcome, number>;
  clamps: number;
  promotions: number;
  preemptions: number;
}

export interface ClassRoomView {
  /** `reservedShare × capacity` (0 while the capacity is unknown). */
  reservedTokens: number;
  /** Tokens the class's programs use on the backend (reasoning + w·acting + buffer each). */
  usedTokens: number;
  /** Reserved room the class leaves unused: held back from every lower class. */
  heldTokens: number;
}

export interface PrioritySnapshot {
  queuePolicy: QueuePolicy;
  priorityPolicy: PriorityPolicy;
  classes: Record<PriorityClass, ClassView>;
  backends: { id: string; classes: Record<PriorityClass, ClassRoomView> }[];
}

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
