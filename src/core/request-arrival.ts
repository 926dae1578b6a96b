import { Errors, type MaitredError } from "../errors.ts";
import { type Arrival, beginStep, newRequest, placeDirect, programFor } from "./arrival-steps.ts";
import { anyHealthy } from "./backend-health.ts";
import { refuseOverBudget } from "./budget.ts";
import { cleanChars } from "./context-estimate.ts";
import { refreshHeadroom } from "./headroom.ts";
import { activeTokens, footprintOf, isPlaceable } from "./ledger.ts";
import { pinAllows, pinError, pinIndex, pinProgram } from "./pinned-backend.ts";
import { argMin } from "./placement.ts";
import { onPriorityArrival } from "./priority/priority-arrival.ts";
import { detachForReplacement } from "./program-moves.ts";
import { enqueue, park, refreshProgram } from "./queue.ts";
import type { ProgramRecord, RequestRecord } from "./records.ts";
import { tryResume } from "./resume.ts";
import { roomOn } from "./room.ts";
import type { SchedulerState } from "./scheduler-state.ts";
import { dispatchOrPark } from "./take-back.ts";
import { parentBackendWithRoom, parentError } from "./tree.ts";

/**
 * A request arrives. Cases (both modes unless noted):
 *   0. shutting down → reject shutting_down;
 *   1. a request id already known, or a parent the program cannot have (tree.ts) → reject
 *      bad_request;
 *   2. no healthy backend → reject no_healthy_backend (never park forever);
 *   3. no program id → a program of one step of its own (arrival-steps.ts `programFor`),
 *      admitted by the cases below like any other: it cannot overfill a backend either;
 *   4. tr, program queued (paused, or new and not yet placed) → park; try a resume;
 *   5. program on an unhealthy backend → leave it, then place as in 7 (default: 8);
 *   6. program active on a healthy backend → dispatch there; if its room was lent during a
 *      long tool call (lending.ts) and the backend has no room for it any more, it is paused
 *      and its request parked (it waits like any program over capacity);
 *   7. tr, program new or leaving → a new sub-agent on its parent's backend when it fits there
 *      (tree.ts), any other on the placeable backend with the fewest
 *      active tokens that has room (room.ts), unless programs with a waiting request are
 *      queued (they go first); otherwise queued and parked, and a resume is tried at once
 *      (which also seats it on a backend with nothing in flight). Paused programs with
 *      nothing waiting never hold a new program back;
 *   8. default, program new or leaving → the healthy backend with the fewest programs; it
 *      stays there;
 *   9. tr with priorities on → cases 4–7 by class (priority/priority-arrival.ts);
 *  10. before all of 3–9: a program past a budget → reject program_budget_exceeded and
 *      release it (budget.ts);
 *  11. a request pinned to the backend holding the state it continues (a stored response):
 *      refused when that backend is unhealthy or unknown; its program leaves any other
 *      backend before 4–9, and 7–8 (and the resume pass) place it there alone
 *      (pinned-backend.ts).
 */
export function onRequestArrived(state: SchedulerState, arrived: Arrival): void {
  // A retry whose program ended while its first try ran goes on as a request of no program:
  // bringing the program back would hand it a fresh budget and books.
  const ev: Arrival =
    arrived.retry === true && arrived.programId !== null && !state.programs.has(arrived.programId)
      ? { ...arrived, programId: null, parentProgramId: undefined }
      : arrived;
  const error = admissionError(state, ev);
  if (error !== null) {
    state.effects.reject(ev.requestId, error); // 0, 1, 2
    return;
  }
  // 10. a program past its budget (or ended by one a short while ago) → reject, release.
  if (ev.programId !== null && ev.retry !== true) {
    if (refuseOverBudget(state, ev.requestId, ev.programId, ev.budget)) {
      tryResume(state);
      return;
    }
  }
  const chars = cleanChars(ev.messageChars ?? []);
  if (state.priority !== null) {
    onPriorityArrival(state, ev, chars); // 9
    return;
  }
  const p = programFor(state, ev); // 3
  beginStep(state, p, ev);
  const r = newRequest(state, ev, p, chars);
  pinProgram(state, p, ev); // 11
  if (state.queue.has(p)) {
    park(state, p, r); // 4
    refreshProgram(state, p);
    tryResume(state);
    return;
  }
  if (p.backend !== null && !p.backend.healthy) detachForReplacement(state, p); // 5
  if (p.backend !== null) {
    dispatchOrPark(state, p, r); // 6
  } else if (state.config.mode === "default") {
    placeDefault(state, p, r); // 8
  } else {
    placeNew(state, p, r); // 7
  }
}

function admissionError(state: SchedulerState, ev: Arrival): MaitredError | null {
  if (state.shuttingDown) return Errors.shuttingDown();
  if (state.requests.has(ev.requestId)) return Errors.badRequest("Duplicate request id.");
  // A bad parent is the caller's error, refused before anything changes (tree.ts).
  const tree = parentError(state, ev);
  if (tree !== null) return tree;
  if (!anyHealthy(state)) return Errors.noHealthyBackend();
  return pinError(state, ev); // 11
}

/** Case 7: `need` is the program's context with this request plus its headroom. */
function placeNew(state: SchedulerState, p: ProgramRecord, r: RequestRecord): void {
  refreshHeadroom(state, p);
  const need = Math.max(footprintOf(p), r.tokens) + p.headroom;
  const bs = state.backends;
  const pin = pinIndex(state, p.pinnedBackend);
  // A new sub-agent goes where its parent's prefix is cached when it fits there (tree.ts).
  const home =
    state.waitingPrograms > 0 || pin !== null ? null : parentBackendWithRoom(state, p, need);
  if (home !== null) {
    placeDirect(state, p, r, home);
    return;
  }
  const i =
    state.waitingPrograms > 0
      ? -1
      : argMin(
          bs.length,
          (k) =>
            pinAllows(pin, k) && isPlaceable(bs[k]) && (roomOn(state, bs[k]) as number) >= need,
          (k) => activeTokens(bs[k]),
        );
  if (i >= 0) {
    placeDirect(state, p, r, bs[i]);
    return;
  }
  p.pausedSince ??= state.now;
  enqueue(state, p);
  park(state, p, r);
  refreshProgram(state, p);
  tryResume(state);
}

function placeDefault(state: SchedulerState, p: ProgramRecord, r: RequestRecord): void {
  const bs = state.backends;
  const pin = pinIndex(state, p.pinnedBackend);
  const i = argMin(
    bs.length,
    (k) => pinAllows(pin, k) && bs[k].healthy,
    (k) => bs[k].programs.size,
  );
  placeDirect(state, p, r, bs[i]); // cases 2 and 11 guarantee a healthy backend
}
