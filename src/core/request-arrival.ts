import { Errors, type MaitredError } from "../errors.ts";
import { type Arrival, newRequest, placeDirect, programFor } from "./arrival-steps.ts";
import { anyHealthy } from "./backend-health.ts";
import { cleanChars } from "./context-estimate.ts";
import { refreshHeadroom } from "./headroom.ts";
import { activeTokens, footprintOf, isPlaceable, roomTokens } from "./ledger.ts";
import { argMin } from "./placement.ts";
import { arrivalClass, onPriorityArrival } from "./priority/priority-arrival.ts";
import { countAdmission } from "./priority/priority-state.ts";
import { detachForReplacement, dispatchRequest } from "./program-moves.ts";
import { enqueue, park, refreshProgram, touch } from "./queue.ts";
import { fewestTokensBackend, tryResume } from "./resume.ts";
import type {
  BackendBook,
  ProgramRecord,
  RequestRecord,
  SchedulerState,
} from "./scheduler-state.ts";

/**
 * A request arrives. Cases (both modes unless noted):
 *   0. shutting down → reject shutting_down;
 *   1. a request id already known → reject bad_request (the runtime's ids must be unique);
 *   2. no healthy backend → reject no_healthy_backend (never park forever);
 *   3. anonymous (programId null) → the healthy backend with the fewest tokens, at once; never
 *      paused, queued or merged into a shared program (reference §3.11.5);
 *   4. tr, program queued (paused, or new and not yet placed) → park; try a resume;
 *   5. program on an unhealthy backend → leave it, then place as in 7 (default: 8);
 *   6. program active on a healthy backend → dispatch there;
 *   7. tr, program new or leaving → placed at once on the placeable backend with the fewest
 *      active tokens that has room, unless programs with a waiting request are queued (they
 *      go first); otherwise queued and parked, and a resume is tried at once. Paused programs
 *      with nothing waiting never hold a new program back (reference §3.11.8);
 *   8. default, program new or leaving → the healthy backend with the fewest programs; it
 *      stays there (reference §3.8);
 *   9. tr with priorities on → cases 4–7 by class (priority/priority-arrival.ts).
 */
export function onRequestArrived(state: SchedulerState, ev: Arrival): void {
  const error = admissionError(state, ev);
  if (error !== null) {
    state.effects.reject(ev.requestId, error); // 0, 1, 2
    return;
  }
  const chars = cleanChars(ev.messageChars ?? []);
  if (ev.programId === null) {
    const r = newRequest(state, ev, null, chars, arrivalClass(state, ev));
    countAdmission(state, r.cls, "admitted");
    dispatchRequest(state, r, fewestTokensBackend(state) as BackendBook); // 3
    return;
  }
  if (state.priority !== null) {
    onPriorityArrival(state, ev, ev.programId, chars); // 9
    return;
  }
  const p = programFor(state, ev, ev.programId);
  p.steps++;
  touch(state, p);
  const r = newRequest(state, ev, p, chars);
  if (state.queue.has(p)) {
    park(state, p, r); // 4
    refreshProgram(state, p);
    tryResume(state);
    return;
  }
  if (p.backend !== null && !p.backend.healthy) detachForReplacement(state, p); // 5
  if (p.backend !== null) {
    dispatchRequest(state, r, p.backend); // 6
  } else if (state.config.mode === "default") {
    placeDefault(state, p, r); // 8
  } else {
    placeNew(state, p, r); // 7
  }
}

function admissionError(state: SchedulerState, ev: Arrival): MaitredError | null {
  if (state.shuttingDown) return Errors.shuttingDown();
  if (state.requests.has(ev.requestId)) return Errors.badRequest("Duplicate request id.");
  if (!anyHealthy(state)) return Errors.noHealthyBackend();
  return null;
}

function placeNew(state: SchedulerState, p: ProgramRecord, r: RequestRecord): void {
  refreshHeadroom(state, p);
  const need = Math.max(footprintOf(p), r.tokens) + p.headroom;
  const bs = state.backends;
  const i =
    state.waitingPrograms > 0
      ? -1
      : argMin(
          bs.length,
          (k) => isPlaceable(bs[k]) && (roomTokens(bs[k], state.config) as number) >= need,
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
  const i = argMin(
    bs.length,
    (k) => bs[k].healthy,
    (k) => bs[k].programs.size,
  );
  placeDirect(state, p, r, bs[i]); // case 2 guarantees a healthy backend
}
