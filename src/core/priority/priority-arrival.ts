import { Errors } from "../../errors.ts";
import { type Arrival, beginStep, newRequest, placeDirect, programFor } from "../arrival-steps.ts";
import { headroomOf, refreshHeadroom } from "../headroom.ts";
import { activeTokens, footprintOf, isPlaceable, setProgramClass } from "../ledger.ts";
import { pinAllows, pinIndex, pinProgram } from "../pinned-backend.ts";
import { argMin } from "../placement.ts";
import { detachForReplacement, dispatchRequest, resumeProgram } from "../program-moves.ts";
import { enqueue, park, refreshProgram } from "../queue.ts";
import type { ProgramRecord } from "../records.ts";
import { tryResume } from "../resume.ts";
import type { SchedulerState } from "../scheduler-state.ts";
import { dispatchOrPark } from "../take-back.ts";
import { classRoomTokens } from "./class-room.ts";
import { tryPreempt } from "./preemption.ts";
import {
  type ClassIndex,
  classIndex,
  DEFAULT_CLASS_INDEX,
  isPriorityClass,
  PRIORITY_CLASSES,
} from "./priority-classes.ts";
import { countAdmission, isStarved, type PriorityState, queueHead } from "./priority-state.ts";

/**
 * What `headroomOf` reads of a program (its own step growth): a program without a record yet
 * has learned none, so it gets the all-programs prior (headroom.ts case 3).
 */
const UNSEEN: Pick<ProgramRecord, "growthEma"> = { growthEma: -1 };

/**
 * The headroom the arriving request's program counts once placed, as request-arrival.ts sizes
 * a new placement (tokens + the program's learned headroom), without creating a program that
 * a full queue would reject.
 */
function arrivalHeadroom(state: SchedulerState, existing: ProgramRecord | undefined): number {
  if (existing === undefined) return headroomOf(state, UNSEEN as ProgramRecord);
  refreshHeadroom(state, existing);
  return existing.headroom;
}

/**
 * The request's class as the adapter resolved and clamped it (priority-classes.ts); a value the
 * core does not know counts as `default` rather than failing the request. Counts the clamp.
 */
export function arrivalClass(state: SchedulerState, ev: Arrival): ClassIndex {
  if (state.priority === null) return DEFAULT_CLASS_INDEX;
  const cls = isPriorityClass(ev.priorityClass)
    ? classIndex(ev.priorityClass)
    : DEFAULT_CLASS_INDEX;
  if (ev.classClamped === true && ev.retry !== true) state.priority.counters[cls].clamps++;
  return cls;
}

/** Strict order and starvation promotion: may a class-`cls` arrival skip the queue? */
function mayPlaceDirect(state: SchedulerState, pr: PriorityState, cls: ClassIndex): boolean {
  for (let c = 0; c < pr.parked.length; c++) {
    if (c <= cls && pr.parked[c].size > 0) return false; // same or higher class waits first
    const head = queueHead(pr, c);
    if (head !== undefined && isStarved(pr, c, head, state.now)) return false; // admitted next
  }
  return true;
}

/**
 * The placeable backend with the fewest active tokens where class `cls` has `need`, among
 * those a pin allows (pinned-backend.ts); or -1.
 */
function roomyBackend(
  state: SchedulerState,
  cls: ClassIndex,
  need: number,
  pin: number | null,
): number {
  const bs = state.backends;
  return argMin(
    bs.length,
    (k) =>
      pinAllows(pin, k) &&
      isPlaceable(bs[k]) &&
      (classRoomTokens(state, bs[k], cls) as number) >= need,
    (k) => activeTokens(bs[k]),
  );
}

/**
 * A new sub-agent's parent's backend, when its class has room there for it (its prefix is
 * cached there: tree.ts); -1 otherwise.
 */
function parentHome(state: SchedulerState, ev: Arrival, cls: ClassIndex, need: number): number {
  if (ev.parentProgramId === undefined) return -1;
  const b = state.programs.get(ev.parentProgramId)?.backend ?? null;
  if (b === null || !isPlaceable(b)) return -1;
  return (classRoomTokens(state, b, cls) as number) >= need
    ? (state.backendIndex.get(b.id) as number)
    : -1;
}

/**
 * A program's request with priorities on (tr mode; request-arrival.ts case 9). Cases:
 *   1. the program is active on a healthy backend → dispatched there (its room is its own;
 *      room lent in a long tool call is taken back or the program paused: lending.ts);
 *   2. it is active on an unhealthy backend → it leaves it and is placed as in 3–6;
 *   3. not queued, nothing of its class or higher waiting and no starved head → placed at once
 *      where its class has room (room minus higher classes' idle reservations) for its tokens
 *      plus its headroom (headroom.ts): a new sub-agent on its parent's backend when it fits
 *      there (tree.ts), any other on the backend with the fewest active tokens;
 *   4. no backend has room for its class and the class may preempt → at most one lower-class
 *      victim gives way (preemption.ts) and the program runs on the victim's backend;
 *   5. its class's queue is full → 429 queue_full at once (a new program is not even created);
 *   6. otherwise it is queued and the request parked; a resume pass runs at once.
 * A program takes the class of its latest request. A request pinned to the backend holding the
 * state it continues (pinned-backend.ts) is placed there alone: its program leaves any other
 * backend as in 2, 3 considers that backend only, and it never preempts (4) elsewhere: it
 * waits for room there, made for it when it is overdue.
 */
export function onPriorityArrival(state: SchedulerState, ev: Arrival, chars: number[]): void {
  const pr = state.priority as PriorityState;
  const cls = arrivalClass(state, ev);
  // A retried request was admitted once already: it is not counted again.
  const admit = (outcome: Parameters<typeof countAdmission>[2]) => {
    if (ev.retry !== true) countAdmission(state, cls, outcome);
  };
  const existing = ev.programId === null ? undefined : state.programs.get(ev.programId);
  const r = newRequest(state, ev, existing ?? null, chars, cls);
  const begin = (): ProgramRecord => {
    const p = existing ?? programFor(state, ev);
    r.program = p;
    pinProgram(state, p, ev);
    setProgramClass(p, cls);
    beginStep(state, p, ev);
    return p;
  };
  const pin = pinIndex(state, ev.pinnedBackend ?? existing?.pinnedBackend ?? null);
  if (existing?.backend != null) {
    const here = state.backendIndex.get(existing.backend.id) as number;
    if (existing.backend.healthy && pinAllows(pin, here)) {
      const dispatched = dispatchOrPark(state, begin(), r); // 1
      admit(dispatched ? "admitted" : "queued");
      return;
    }
    // 2, or a request pinned elsewhere (pinned-backend.ts case 3).
    detachForReplacement(
      state,
      existing,
      existing.backend.healthy ? "its request continues state stored elsewhere" : undefined,
    );
  }
  const queued = existing !== undefined && state.queue.has(existing);
  const need =
    Math.max(existing ? footprintOf(existing) : 0, r.tokens) + arrivalHeadroom(state, existing);
  const home = existing === undefined && pin === null ? parentHome(state, ev, cls, need) : -1;
  const roomy = home >= 0 ? home : roomyBackend(state, cls, need, pin);
  if (!queued && roomy >= 0 && mayPlaceDirect(state, pr, cls)) {
    placeDirect(state, begin(), r, state.backends[roomy]); // 3
    admit("admitted");
    return;
  }
  const freed = roomy < 0 && pin === null ? tryPreempt(state, cls, need) : null; // 4
  if (freed !== null) {
    const p = begin();
    if (queued) {
      resumeProgram(state, p, freed, false);
      dispatchRequest(state, r, freed);
    } else placeDirect(state, p, r, freed);
    admit("admitted");
    return;
  }
  if (pr.parked[cls].size >= pr.config.classes[cls].queueDepth) {
    state.requests.delete(r.id); // 5
    admit("queue_full");
    state.effects.reject(
      r.id,
      Errors.queueFull(
        `The ${PRIORITY_CLASSES[cls]} queue is full (${pr.parked[cls].size} waiting).`,
      ),
    );
    return;
  }
  const p = begin(); // 6
  if (!queued) {
    p.pausedSince ??= state.now;
    enqueue(state, p);
  }
  park(state, p, r);
  refreshProgram(state, p);
  admit("queued");
  tryResume(state);
}
