import { Errors, type MaitredError } from "../errors.ts";
import { deadlineOf } from "./deadline.ts";
import { likelyDoneDeadline } from "./likely-done.ts";
import { priorityDeadline } from "./priority/priority-timeouts.ts";
import { firstOf, unpark } from "./queue.ts";
import type { RequestRecord } from "./records.ts";
import { endIfAnonymousAndDone, releaseProgram } from "./release.ts";
import type { SchedulerState } from "./scheduler-state.ts";
import { overdueBoundOf, shortestOverdueBound } from "./wait-bounds.ts";

/**
 * Time-driven decisions, checked on every tick. Each walks an index kept in time order, so
 * the cost is the number of expiries, not the number of programs.
 * Deadlines follow the core's one rule (deadline.ts).
 */

function isDue(state: SchedulerState, start: number, durationMs: number): boolean {
  return deadlineOf(start, durationMs) <= state.now;
}

/** Idle lease: release programs with nothing in flight or parked for `idleTimeoutMs`. */
export function expireIdle(state: SchedulerState): void {
  const idle = state.config.idleTimeoutMs;
  for (const p of state.idleOrder) {
    if (!isDue(state, p.lastActivity, idle)) break;
    // Busy programs are touched again when their requests end; a parent waits on its children.
    if (p.inFlight.length > 0 || p.parked.length > 0 || p.children.size > 0) continue;
    releaseProgram(state, p, "idle");
  }
}

/**
 * With no healthy backend at all, every parked request is answered no_healthy_backend (503,
 * Retry-After) on the tick that finds it so: the resume pass has nowhere to seat it, and a
 * client told to retry does better than one left waiting for a backend that may not return.
 * Arrivals meanwhile are refused the same way (request-arrival.ts). While only some are
 * unhealthy, a request pinned to one of them is refused the same way (stored_response_unavailable).
 */
export function rejectStranded(state: SchedulerState): void {
  let healthy = 0;
  for (const b of state.backends) if (b.healthy) healthy++;
  if (healthy === state.backends.length) return;
  for (const r of [...state.parkedOrder.values()]) {
    if (healthy === 0) {
      rejectParked(state, r, Errors.noHealthyBackend());
      continue;
    }
    // A request pinned to a backend that turned unhealthy can be served nowhere else
    // (pinned-backend.ts): answered now, not at the max wait.
    const pin = r.program?.pinnedBackend ?? null;
    const i = pin === null ? undefined : state.backendIndex.get(pin);
    if (pin !== null && (i === undefined || !state.backends[i].healthy)) {
      rejectParked(state, r, Errors.storedResponseUnavailable(pin, "unhealthy"));
    }
  }
}

/** `maxWaitMs`: a request parked longer gets 503 paused_too_long. */
export function rejectOverdue(state: SchedulerState): void {
  for (const r of state.deadlines) {
    const parkedAt = r.parkedAt as number;
    if (isDue(state, parkedAt, r.maxWaitMs as number)) {
      rejectParked(state, r, Errors.pausedTooLong(state.now - parkedAt));
    }
  }
}

export function rejectParked(state: SchedulerState, r: RequestRecord, error: MaitredError): void {
  unpark(state, r);
  state.requests.delete(r.id);
  state.effects.reject(r.id, error);
  endIfAnonymousAndDone(state, r.program);
}

/**
 * Earliest time a tick would act on a timeout (an overdue queue head, max wait, idle lease, and
 * with priorities the class queue timeouts), so a runtime may wake before the next periodic
 * tick. null = nothing pending.
 */
export function nextDeadline(state: SchedulerState): number | null {
  let next = Number.POSITIVE_INFINITY;
  if (state.config.mode === "tr") {
    // Overdue queue heads (resume.ts case 1): room is made at the class bound, the seat is
    // forced at the max pause. A deadline already past is not reported: the pass acted on it,
    // and a past deadline would make a runtime that wakes on it spin; the tick retries it.
    const rules = state.rules;
    const maxPause = state.config.maxPauseMs;
    for (const cls of rules.overdueOrder) {
      const head = firstOf(rules.parked(cls));
      if (head === undefined) continue;
      const at = head.parkedAt as number;
      const due = deadlineOf(at, maxPause);
      if (due > state.now) next = Math.min(next, due);
      // Room is made at each request's own bound (wait-bounds.ts): oldest first, the first
      // one not yet due under the shortest bound ends the search.
      const shortest = shortestOverdueBound(state, rules.overdueAfterMs(cls));
      for (const r of rules.parked(cls)) {
        const parkedAt = r.parkedAt as number;
        if (deadlineOf(parkedAt, shortest) >= next) break;
        const own = deadlineOf(parkedAt, overdueBoundOf(state, r));
        if (own > state.now) next = Math.min(next, own);
      }
    }
  }
  for (const r of state.deadlines) {
    next = Math.min(next, deadlineOf(r.parkedAt as number, r.maxWaitMs as number));
  }
  // Busy programs are skipped as in `expireIdle`: reporting a deadline the tick will not act
  // on would make a runtime that wakes on it spin.
  for (const p of state.idleOrder) {
    if (p.inFlight.length > 0 || p.parked.length > 0 || p.children.size > 0) continue;
    next = Math.min(next, deadlineOf(p.lastActivity, state.config.idleTimeoutMs));
    break;
  }
  next = Math.min(next, priorityDeadline(state));
  next = Math.min(next, likelyDoneDeadline(state) ?? Number.POSITIVE_INFINITY);
  return Number.isFinite(next) ? next : null;
}
