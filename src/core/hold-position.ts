import type { HoldBound, HoldView } from "./api.ts";
import { deadlineOf } from "./deadline.ts";
import { PRIORITY_CLASSES } from "./priority/priority-classes.ts";
import type { ProgramRecord, RequestRecord } from "./records.ts";
import { overdueParked } from "./resume.ts";
import type { SchedulerState } from "./scheduler-state.ts";
import { waitBoundOf } from "./wait-bounds.ts";

/**
 * Where a held (parked) request stands, for the client waiting on it and for the admin views.
 * Read-only: nothing here changes the state.
 *
 * Position is the place of the request's program in the order the resume pass (resume.ts)
 * considers programs with a held request, 1 = first:
 *   1. overdue requests first, class by class in the pass's overdue order, oldest first (case
 *      1 of the pass: room is made for them);
 *   2. then every other program with a held request, in the resume order (`policies.resumeOrder`:
 *      group then smallest with ThunderAgent's order, class first with priorities on).
 * Programs paused with nothing held are left out: they hold no client. It is the order of
 * consideration, not a promise of the order of seats: the pass skips a program that does not
 * fit where it is (a smaller one behind it may be seated first), and what arrives or ends
 * before the next pass reorders the queue. Cost: O(held programs) for one request, plus a sort
 * for the whole list.
 */

/** The programs with a held request: the overdue ones in seating order, then the rest unsorted. */
function heldPrograms(state: SchedulerState): { overdue: ProgramRecord[]; rest: ProgramRecord[] } {
  const seen = new Set<ProgramRecord>();
  const overdue: ProgramRecord[] = [];
  for (const cls of state.rules.overdueOrder) {
    for (const r of overdueParked(state, cls)) {
      const p = r.program;
      if (p === null || seen.has(p) || !state.queue.has(p)) continue;
      seen.add(p);
      overdue.push(p);
    }
  }
  const rest: ProgramRecord[] = [];
  for (const r of state.parkedOrder.values()) {
    const p = r.program;
    if (p === null || seen.has(p) || !state.queue.has(p)) continue;
    seen.add(p);
    rest.push(p);
  }
  return { overdue, rest };
}

/** Which bound starts making room for `r` (wait-bounds.ts). */
function roomBound(state: SchedulerState, { ms, by }: ReturnType<typeof waitBoundOf>): HoldBound {
  if (ms >= state.config.maxPauseMs) return "max_pause";
  if (by !== "class") return by;
  return state.priority === null ? "ageing" : "class_threshold";
}

function view(
  state: SchedulerState,
  p: ProgramRecord,
  r: RequestRecord,
  position: number,
  waiting: number,
): HoldView {
  const at = r.parkedAt as number;
  const wait = waitBoundOf(state, r);
  const bound = wait.ms;
  const pr = state.priority;
  return {
    programId: p.id,
    requestId: r.id,
    position,
    waitingPrograms: waiting,
    parkedAt: at,
    waitedMs: state.now - at,
    roomAt: Number.isFinite(bound) ? deadlineOf(at, bound) : null,
    roomBound: Number.isFinite(bound) ? roomBound(state, wait) : null,
    seatAt: deadlineOf(at, state.config.maxPauseMs),
    maxWaitAt: r.maxWaitMs === null ? null : deadlineOf(at, r.maxWaitMs),
    queueTimeoutAt: pr === null ? null : deadlineOf(at, pr.config.classes[r.cls].queueTimeoutMs),
    ...(pr === null ? {} : { priorityClass: PRIORITY_CLASSES[r.cls] }),
  };
}

/** The held request named, or the oldest held request of the program named; else null. */
function heldRequest(
  state: SchedulerState,
  key: { requestId: string } | { programId: string },
): RequestRecord | null {
  if ("requestId" in key) {
    const r = state.parkedOrder.get(key.requestId);
    return r === undefined ? null : r;
  }
  return state.programs.get(key.programId)?.parked[0] ?? null;
}

export function holdOf(
  state: SchedulerState,
  key: { requestId: string } | { programId: string },
): HoldView | null {
  const r = heldRequest(state, key);
  const p = r?.program ?? null;
  if (r === null || p === null || !state.queue.has(p)) return null;
  const { overdue, rest } = heldPrograms(state);
  const waiting = overdue.length + rest.length;
  const i = overdue.indexOf(p);
  if (i >= 0) return view(state, p, r, i + 1, waiting);
  let ahead = 0;
  for (const q of rest) if (q !== p && state.policies.resumeOrder(q, p) < 0) ahead++;
  return view(state, p, r, overdue.length + ahead + 1, waiting);
}

/** Every program with a held request (its oldest one), in position order. */
export function holds(state: SchedulerState): HoldView[] {
  const { overdue, rest } = heldPrograms(state);
  const order = overdue.concat(rest.sort(state.policies.resumeOrder));
  return order.map((p, i) => view(state, p, p.parked[0], i + 1, order.length));
}
