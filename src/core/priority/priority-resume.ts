import { activePrograms, isPlaceable, resumeRoomTokens } from "../ledger.ts";
import { resumeProgram, seatOnEmpty } from "../program-moves.ts";
import { compactQueueOrder } from "../queue.ts";
import type { ProgramRecord, SchedulerState } from "../scheduler-state.ts";
import { holdFor } from "./class-room.ts";
import { CLASS_COUNT, type ClassIndex, PRIORITY_CLASSES } from "./priority-classes.ts";
import { isStarved, type PriorityState, queueHead } from "./priority-state.ts";
import { makeRoomForStarved } from "./starved-room.ts";

type Rooms = (number | null)[];

/**
 * The resume pass with priorities on (tr mode; replaces resume.ts `tryResume`'s selection).
 * A program's need is its tokens plus its learned headroom (headroom.ts), as in resume.ts.
 *
 *   1. Starvation promotion, lowest class first (seed 000 "Starvation promotion"): while the
 *      oldest parked request of a class has waited past the class threshold, its program is
 *      admitted now: into any room (reserved-but-idle room included), else onto an empty
 *      backend, else onto the backend with the most room after pausing what is missing from
 *      its own and lower classes (starved-room.ts), even if that is not enough: a forced resume
 *      at the class threshold. So a starved head is seated at its threshold (the runtime ticks
 *      then: `nextDeadline`) and never holds the other classes back (issue 5 targets;
 *      src/core/priority/README.md "Evidence").
 *   2. The queue in class order (class-order.ts). Each program is placed where its class may
 *      take room (room minus the idle reservations of higher classes: class-room.ts), on its
 *      origin backend when it fits there, else by the placement policy. Within a class a program
 *      that does not fit is skipped (tr's skip-and-continue); across classes the order is strict:
 *      once a waiting program that could fit an empty backend does not fit now, no lower class
 *      is admitted in this pass.
 *   3. A placeable backend with no active program takes the first waiting program in class
 *      order even if it exceeds the room (an oversized program must run somewhere).
 */
export function tryPriorityResume(state: SchedulerState): void {
  const pr = state.priority;
  if (pr === null || state.queue.size === 0) return;
  const raw: Rooms = new Array(state.backends.length);
  let empty = false;
  for (let i = 0; i < raw.length; i++) {
    const b = state.backends[i];
    const placeable = isPlaceable(b);
    raw[i] = placeable ? resumeRoomTokens(b, state.config, state.now) : null;
    if (placeable && activePrograms(b) === 0) empty = true;
  }
  const index = pr.backendIndex;
  if (!promoteStarved(state, pr, index, raw)) return; // 1
  if (state.queue.size === 0) return;
  placeInClassOrder(state, index, raw); // 2
  if (empty && state.waitingPrograms > 0) seatOversized(state); // 3
}

function maxOf(rooms: Rooms): number {
  let max = Number.NEGATIVE_INFINITY;
  for (const r of rooms) if (r !== null && r > max) max = r;
  return max;
}

type Index = ReadonlyMap<string, number>;

function chooseTarget(
  state: SchedulerState,
  index: Index,
  rooms: Rooms,
  p: ProgramRecord,
  need: number,
) {
  if (p.originBackend !== null) {
    const i = index.get(p.originBackend) ?? -1;
    const room = i < 0 ? null : rooms[i];
    if (room !== null && room >= need) return i;
  }
  return state.policies.place(rooms, need);
}

function emptyBackend(state: SchedulerState): number {
  return state.backends.findIndex((b) => isPlaceable(b) && activePrograms(b) === 0);
}

/** The placeable backend with the most room (raw), or -1. */
function mostRoom(rooms: Rooms): number {
  let best = -1;
  for (let i = 0; i < rooms.length; i++) {
    const r = rooms[i];
    if (r !== null && (best < 0 || r > (rooms[best] as number))) best = i;
  }
  return best;
}

/** Step 1. Returns false when no backend is placeable (the pass must stop). */
function promoteStarved(
  state: SchedulerState,
  pr: PriorityState,
  index: Index,
  raw: Rooms,
): boolean {
  for (let c: ClassIndex = CLASS_COUNT - 1; c >= 0; c--) {
    for (;;) {
      const head = queueHead(pr, c);
      if (head === undefined || !isStarved(pr, c, head, state.now)) break;
      const p = head.program;
      if (p === null || !state.queue.has(p)) break; // parked requests belong to queued programs
      const need = p.tokens + p.headroom;
      let target = chooseTarget(state, index, raw, p, need);
      let madeRoom = false;
      if (target < 0) target = emptyBackend(state);
      if (target < 0) {
        target = mostRoom(raw);
        if (target < 0) return false;
        const b = state.backends[target];
        const missing = need - (raw[target] as number) - (b.markedTokens + b.markedHeadroom);
        if (missing > 0) makeRoomForStarved(state, b, c, missing);
        raw[target] = resumeRoomTokens(b, state.config, state.now);
        madeRoom = true;
      }
      if (raw[target] !== null) (raw[target] as number) -= need;
      pr.counters[c].promotions++;
      state.effects.log("info", "starved program promoted", {
        programId: p.id,
        class: PRIORITY_CLASSES[c],
        waitedMs: state.now - (head.parkedAt as number),
        backend: state.backends[target].id,
        madeRoom,
      });
      resumeProgram(state, p, state.backends[target], false);
    }
  }
  return true;
}

/** Step 2. */
function placeInClassOrder(state: SchedulerState, index: Index, raw: Rooms): void {
  let maxRaw = maxOf(raw);
  // The need floor is a lower bound of every queued need: below it nothing fits, so the pass
  // ends in O(backends) without sorting the queue (as resume.ts does).
  if (maxRaw < state.needFloor) return;
  const order = compactQueueOrder(state).sort(state.policies.resumeOrder);
  let maxCapacity = 0;
  for (const b of state.backends) {
    if (isPlaceable(b) && (b.capacity as number) > maxCapacity) maxCapacity = b.capacity as number;
  }
  let blockedBelow: ClassIndex = CLASS_COUNT; // classes with a larger index are not admitted
  let roomsClass = -1;
  let rooms: Rooms = raw;
  for (const p of order) {
    if (p.cls > blockedBelow) continue;
    if (p.cls !== roomsClass) {
      roomsClass = p.cls;
      rooms = raw.map((r, i) => (r === null ? null : r - holdFor(state, state.backends[i], p.cls)));
    }
    const need = p.tokens + p.headroom;
    const target = need <= maxRaw ? chooseTarget(state, index, rooms, p, need) : -1;
    if (target < 0) {
      if (p.parked.length > 0 && need <= maxCapacity && p.cls < blockedBelow) blockedBelow = p.cls;
      continue;
    }
    const wasMax = raw[target] === maxRaw;
    (raw[target] as number) -= need;
    (rooms[target] as number) -= need;
    if (wasMax) maxRaw = maxOf(raw);
    resumeProgram(state, p, state.backends[target], false);
    if (maxRaw < state.needFloor) return;
  }
}

/** Step 3 (resume.ts `seatOversized`, in class order). */
function seatOversized(state: SchedulerState): void {
  let target = emptyBackend(state);
  if (target < 0 || state.waitingPrograms === 0) return;
  for (const p of compactQueueOrder(state).sort(state.policies.resumeOrder)) {
    if (p.parked.length === 0) continue;
    seatOnEmpty(state, p, state.backends[target]);
    target = emptyBackend(state);
    if (target < 0) return;
  }
}
