import { Errors, type MaitredError } from "../errors.ts";
import type { Arrival } from "./arrival-steps.ts";
import { detachForReplacement } from "./program-moves.ts";
import type { ProgramRecord } from "./records.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/**
 * A request that continues state one backend holds (an OpenAI Responses `previous_response_id`:
 * the backend keeps its stored responses in its own memory, and any other answers 404) names
 * that backend, and its program is placed there or nowhere, in both modes:
 *   1. the backend is unknown or unhealthy → the request is refused
 *      (stored_response_unavailable), never served elsewhere; a parked one is refused when its
 *      backend turns unhealthy (timeouts.ts `rejectStranded`);
 *   2. the program is queued with a parked request pinned elsewhere → bad_request (its
 *      requests could be served together nowhere);
 *   3. the program is active elsewhere → it leaves that backend as from an unhealthy one
 *      (program-moves.ts `detachForReplacement`), and is placed as a program with no backend;
 *   4. placing it (arrival, the resume pass's cases, the idle seat) considers that backend
 *      alone; without room there it waits, and when overdue room is made there.
 * The pin is the program's while a pinned request of it waits: it ends when none is parked any
 * more (dispatched, refused, or gone: program-moves.ts `dispatchRequest`, queue.ts `unpark`),
 * so a request that continues nothing no longer waits for that backend once the pinned one left.
 */

/** Cases 1 and 2: why the arrival is refused, or null. */
export function pinError(state: SchedulerState, ev: Arrival): MaitredError | null {
  const pin = ev.pinnedBackend;
  if (pin === undefined) return null;
  const i = state.backendIndex.get(pin);
  if (i === undefined) return Errors.storedResponseUnavailable(pin, "unknown");
  if (!state.backends[i].healthy) return Errors.storedResponseUnavailable(pin, "unhealthy");
  const p = ev.programId === null ? undefined : state.programs.get(ev.programId);
  if (p !== undefined && p.pinnedBackend !== null && p.pinnedBackend !== pin) {
    return Errors.badRequest(
      `This program has a request waiting for backend ${p.pinnedBackend}, and this one continues a response stored on ${pin}.`,
      "previous_response_id",
    );
  }
  return null;
}

/** Case 3: the arrival's pin becomes its program's; a program active elsewhere leaves. */
export function pinProgram(state: SchedulerState, p: ProgramRecord, ev: Arrival): void {
  if (ev.pinnedBackend === undefined) return;
  p.pinnedBackend = ev.pinnedBackend;
  if (p.backend !== null && p.backend.id !== ev.pinnedBackend) {
    detachForReplacement(state, p, "its request continues state stored elsewhere");
  }
}

/** Case 4: the index of the backend a pin names; null = no pin, −1 = a backend not known. */
export function pinIndex(state: SchedulerState, backendId: string | null): number | null {
  return backendId === null ? null : (state.backendIndex.get(backendId) ?? -1);
}

/** Case 4: whether a pin (`pinIndex`) lets its program be placed on backend `k`. */
export function pinAllows(pin: number | null, k: number): boolean {
  return pin === null || pin === k;
}
