import { seatNeed } from "./headroom.ts";
import { setLent } from "./ledger.ts";
import { tryPreempt } from "./priority/preemption.ts";
import { dispatchRequest, pauseProgram, resumeProgram } from "./program-moves.ts";
import { park, refreshProgram } from "./queue.ts";
import type { BackendBook, ProgramRecord, RequestRecord } from "./records.ts";
import { tryResume } from "./resume.ts";
import { roomOn } from "./room.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/**
 * A program active on a healthy backend sends its next request (both arrival paths). If its
 * room was lent during a long tool call (lending.ts), it is booked again; a backend that no
 * longer has room for it pauses it like any program over capacity, and its request waits,
 * unless its class may preempt a lower one (priorities on).
 */

/**
 * The program sends again: its lent room is booked again. Returns false when its backend no
 * longer has room for it (the caller pauses it); a backend with nothing in flight always
 * takes it back (a GPU never idles while a request waits).
 */
export function takeBack(state: SchedulerState, p: ProgramRecord): boolean {
  if (!p.lent) return true;
  setLent(p, false);
  const b = p.backend;
  if (b === null || b.inFlight.size === 0) return true;
  // Its headroom, booked again with its tokens, is what covers the new request's growth.
  const room = roomOn(state, b);
  return room === null || room >= 0;
}

/** Dispatch the request there, or pause the program and park it when its room is gone. */
export function dispatchOrPark(state: SchedulerState, p: ProgramRecord, r: RequestRecord): boolean {
  const b = p.backend as BackendBook;
  if (takeBack(state, p)) {
    dispatchRequest(state, r, b);
    return true;
  }
  pauseProgram(state, p, "room lent, none left on its return");
  park(state, p, r);
  refreshProgram(state, p);
  if (preemptFor(state, p)) return true;
  tryResume(state);
  return false;
}

/**
 * With priorities on, a returning program of a class that may preempt is treated like an
 * arriving request of that class: a lower-class program gives way (preemption.ts) and it is
 * seated on that backend at once, rather than waiting for the resume pass. Lending its room
 * during its think time must not cost an interactive user their turn.
 */
function preemptFor(state: SchedulerState, p: ProgramRecord): boolean {
  if (state.priority === null) return false;
  const freed = tryPreempt(state, p.cls, seatNeed(state, p));
  if (freed === null) return false;
  resumeProgram(state, p, freed, false);
  return true;
}
