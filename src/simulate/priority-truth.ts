import { summarize } from "../bench/percentile.ts";
import type { Scheduler } from "../core/api.ts";
import { PRIORITY_CLASSES, type PriorityClass } from "../core/priority/priority-classes.ts";
import type { AdmissionOutcome, PrioritySnapshot } from "../core/priority/priority-views.ts";

/**
 * The core's own priority figures over the steady window, beside the per-class figures the
 * report derives from the workload's records: admissions by outcome, promotions, preemptions
 * and clamps (`snapshot().priority`, deltas over the window), and the queue waits the core
 * observed by class (`drainQueueWaitObservations`, drained on every tick so its bound never
 * drops one). Present in the report only while priorities are in force.
 */

export interface ClassTruth {
  settings: {
    reserved_share: number;
    queue_depth: number;
    queue_timeout_ms: number;
    starvation_ms: number;
    preempt: boolean;
  };
  admissions: Record<AdmissionOutcome, number>;
  promotions: number;
  preemptions: number;
  clamps: number;
  /** Waits of requests the core dispatched after parking them, drained in the window. */
  queue_wait_ms: { count: number; p95: number | null; max: number | null };
  /** The longest wait of a request of this class still parked when the run ended. */
  still_waiting_max_ms: number | null;
}

export interface PriorityTruth {
  queue_policy: string;
  priority_policy: string;
  classes: Record<PriorityClass, ClassTruth>;
}

export interface PriorityRecorder {
  /** Drain the core's queue-wait observations (call on every tick, at `tS` seconds). */
  onTick(tS: number): void;
  markWindowStart(): void;
  /** `stillWaiting`: longest current wait by class of requests parked at the end. */
  finish(stillWaiting: Partial<Record<PriorityClass, number>>): PriorityTruth | undefined;
}

const round1 = (v: number) => Math.round(v * 10) / 10;

/** `window`: the steady window in seconds; observations drained outside it are dropped. */
export function createPriorityRecorder(
  scheduler: Scheduler,
  window: { startS: number; endS: number },
): PriorityRecorder {
  let start: PrioritySnapshot | undefined = scheduler.snapshot().priority;
  const waits = new Map<PriorityClass, number[]>(PRIORITY_CLASSES.map((c) => [c, []]));
  return {
    onTick(tS) {
      const list = scheduler.drainQueueWaitObservations?.() ?? [];
      if (tS < window.startS || tS >= window.endS) return;
      for (const o of list) waits.get(o.priorityClass)?.push(o.ms);
    },
    markWindowStart() {
      start = scheduler.snapshot().priority;
    },
    finish(stillWaiting) {
      const end = scheduler.snapshot().priority;
      if (end === undefined || start === undefined) return undefined;
      const s = start;
      const classes = {} as Record<PriorityClass, ClassTruth>;
      for (const cls of PRIORITY_CLASSES) {
        const a = end.classes[cls];
        const b = s.classes[cls];
        const admissions = { ...a.admissions };
        for (const k of Object.keys(admissions) as AdmissionOutcome[]) {
          admissions[k] -= b.admissions[k];
        }
        const w = summarize(waits.get(cls) ?? []);
        const still = stillWaiting[cls];
        classes[cls] = {
          settings: {
            reserved_share: a.settings.reservedShare,
            queue_depth: a.settings.queueDepth,
            queue_timeout_ms: a.settings.queueTimeoutMs,
            starvation_ms: a.settings.starvationMs,
            preempt: a.settings.preempt,
          },
          admissions,
          promotions: a.promotions - b.promotions,
          preemptions: a.preemptions - b.preemptions,
          clamps: a.clamps - b.clamps,
          queue_wait_ms: {
            count: w.count,
            p95: w.count === 0 ? null : round1(w.p95),
            max: w.count === 0 ? null : round1(w.max),
          },
          still_waiting_max_ms: still === undefined ? null : round1(still),
        };
      }
      return { queue_policy: end.queuePolicy, priority_policy: end.priorityPolicy, classes };
    },
  };
}
