import { Errors } from "../../errors.ts";
import { deadlineOf } from "../deadline.ts";
import { unpark } from "../queue.ts";
import { endIfAnonymousAndDone } from "../release.ts";
import type { SchedulerState } from "../scheduler-state.ts";
import { PRIORITY_CLASSES } from "./priority-classes.ts";
import { countAdmission } from "./priority-state.ts";

/**
 * Per-class queue timeouts: a request that waits longer than its class's timeout gets 408. Each
 * class's parked requests are kept in parking order, so the walk stops at the first one still
 * within its time: O(expiries). Due by the core's one rule (timeouts.ts `deadlineOf`: `now >= start
 * + duration`), the deadline `priorityDeadline` reports.
 */
export function rejectQueueTimeouts(state: SchedulerState): void {
  const pr = state.priority;
  if (pr === null) return;
  for (let c = 0; c < pr.parked.length; c++) {
    const timeout = pr.config.classes[c].queueTimeoutMs;
    for (const r of pr.parked[c].values()) {
      const at = r.parkedAt as number;
      if (deadlineOf(at, timeout) > state.now) break;
      const waited = state.now - at;
      unpark(state, r);
      state.requests.delete(r.id);
      endIfAnonymousAndDone(state, r.program);
      countAdmission(state, c, "queue_timeout");
      state.effects.reject(
        r.id,
        Errors.queueTimeout(
          `Request waited ${waited} ms in the ${PRIORITY_CLASSES[c]} queue, past its ${timeout} ms limit.`,
        ),
      );
    }
  }
}

/** Earliest per-class queue timeout (a class head's starvation bound: timeouts.ts). */
export function priorityDeadline(state: SchedulerState): number {
  const pr = state.priority;
  let next = Number.POSITIVE_INFINITY;
  if (pr === null) return next;
  for (let c = 0; c < pr.parked.length; c++) {
    const settings = pr.config.classes[c];
    for (const r of pr.parked[c].values()) {
      const at = r.parkedAt as number;
      next = Math.min(next, deadlineOf(at, settings.queueTimeoutMs));
      break;
    }
  }
  return next;
}
