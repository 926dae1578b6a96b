import { deadlineOf } from "./deadline.ts";
import { seatNeed } from "./headroom.ts";
import { activePrograms, activeTokens, isPlaceable } from "./ledger.ts";
import { lendRoom } from "./lending.ts";
import { keepsEvictedContexts, pausePriceOf } from "./pause-price.ts";
import { makeRoom } from "./pause-step.ts";
import { pinAllows, pinIndex } from "./pinned-backend.ts";
import { argMin } from "./placement.ts";
import type { ClassIndex } from "./priority/priority-classes.ts";
import { countPromotion } from "./priority/priority-state.ts";
import { pauseProgram, resumeProgram } from "./program-moves.ts";
import { compactQueueOrder } from "./queue.ts";
import type { BackendBook, ProgramRecord, RequestRecord } from "./records.ts";
import { markedRoom, roomAfterFreeing, roomOn } from "./room.ts";
import type { SchedulerState } from "./scheduler-state.ts";
import { parentBackendOf } from "./tree.ts";
import { overdueBoundOf, shortestOverdueBound } from "./wait-bounds.ts";

type Rooms = (number | null)[];

/**
 * The resume pass (tr mode), run on every tick and whenever capacity frees; the same pass
 * with or without priority classes (their rules come through `state.rules`: class-rules.ts).
 * A program's need is its tokens plus its learned headroom (headroom.ts); a backend's room is
 * room.ts `roomOn` (the books corrected by the engine's truth). Cases:
 *
 *   1. Overdue requests. For each class in `rules.overdueOrder`, every parked request that has
 *      waited past its class's bound (`overdueAfterMs`: the ageing bound, at most the max
 *      pause), oldest first, has its program seated: in any room that fits, else on the
 *      backend with the most room once the victims its class may displace are freed (ACTING
 *      ones paused at once, REASONING ones marked: pause-step.ts `makeRoom`). While marked
 *      programs have not ended their turn the backend is held for it (nothing else is placed
 *      there) and it is seated as soon as the room is there. Once it has waited the max pause
 *      it is seated at once (a forced resume): its marked programs aside, the backend is then
 *      over capacity by less than this one program, and the marked ones free their room at
 *      their turn's end. A program larger than every backend gets the largest one emptied. So
 *      no request waits much longer than the max pause (plus the time to the tick that finds
 *      it, which the runtimes arm at `nextDeadline`), and smallest-first resume cannot
 *      starve a large program.
 *   2. The queue in resume order (policies.resumeOrder). Each program is placed where it
 *      fits, after the room its class must leave to higher classes (`rules.hold`): on its
 *      origin backend when it fits there (its prefix may be cached), else by the placement
 *      policy; one whose origin keeps evicted KV in host memory waits for its origin
 *      (`chooseTarget`). Within a class a program that does not fit is skipped (the next may fit);
 *      across classes the order is strict: once a waiting program that could fit an empty
 *      backend does not fit now, no lower class is placed in this pass.
 *   3. Idle backends. A placeable backend with no request in flight (by the router's count and
 *      the engine's last report) takes the first waiting program in resume order, whatever
 *      the books say: programs in a tool call are paused to make its room (their KV is idle),
 *      or lend it when they are of a class it may not displace, so the backend is overfilled
 *      by that one program at most.
 *      A GPU never sits idle while a request waits, and a program larger than a whole backend
 *      still runs, on a backend of its own.
 */
export function tryResume(state: SchedulerState): void {
  if (state.queue.size === 0) return;
  state.resumePass++;
  const rooms: Rooms = state.backends.map((b) => (isPlaceable(b) ? roomOn(state, b) : null));
  seatOverdue(state, rooms); // 1
  if (state.queue.size === 0) return;
  placeInOrder(state, rooms); // 2
  if (state.waitingPrograms > 0) seatOnIdle(state); // 3
}

function maxOf(rooms: Rooms): number {
  let max = Number.NEGATIVE_INFINITY;
  for (const r of rooms) if (r !== null && r > max) max = r;
  return max;
}

function indexOf(state: SchedulerState, id: string): number {
  return state.backendIndex.get(id) ?? -1;
}

/**
 * A placement's room leaves the pass's rooms; a backend of unknown capacity takes one
 * program per pass (room.ts `capacityUnknownRoom`) and is closed after it.
 */
function takeRoom(state: SchedulerState, rooms: Rooms, target: number, need: number): void {
  const room = rooms[target] as number;
  rooms[target] = state.backends[target].capacity === null ? null : room - need;
}

/**
 * Origin backend (for a new sub-agent: its parent's) when the program fits there, else the
 * placement policy; -1 = nowhere.
 * A program paused from a backend whose engine keeps evicted KV in host memory waits for its
 * origin: its context comes back there at transfer cost, and anywhere else at the cost of a
 * whole prefill. Simulated (DeepSeek trace, 128 programs, 2 × 26,000 blocks, 200 GiB each),
 * resuming elsewhere re-prefilled 40 M prompt tokens in an hour instead of 32 M and lost 4 % of
 * steps/min. The
 * wait stays bounded: an overdue program is seated wherever room can be made (case 1).
 */
function chooseTarget(state: SchedulerState, rooms: Rooms, p: ProgramRecord, need: number) {
  // A program whose request continues state one backend holds goes there or nowhere
  // (pinned-backend.ts).
  const pin = pinIndex(state, p.pinnedBackend);
  if (pin !== null) {
    const room = pin < 0 ? null : rooms[pin];
    return room !== null && room >= need ? pin : -1;
  }
  // A sub-agent never placed yet goes where its parent's prefix is cached, when it fits (tree.ts).
  const parent = parentBackendOf(p);
  if (parent !== null) {
    const i = indexOf(state, parent.id);
    const room = i < 0 ? null : rooms[i];
    if (room !== null && room >= need) return i;
  }
  if (p.originBackend !== null) {
    const i = indexOf(state, p.originBackend);
    const room = i < 0 ? null : rooms[i];
    if (room !== null && room >= need) return i;
    if (i >= 0 && keepsEvictedContexts(state.backends[i])) return -1;
  }
  return state.policies.place(rooms, need);
}

/**
 * The parked requests of class `cls` that have waited past its bound, oldest first: the ones
 * case 1 seats, in the order it tries them (hold-position.ts reports the same order).
 */
export function overdueParked(state: SchedulerState, cls: ClassIndex): RequestRecord[] {
  const shortest = shortestOverdueBound(state, state.rules.overdueAfterMs(cls));
  const due: RequestRecord[] = [];
  for (const r of state.rules.parked(cls)) {
    if (!isOverdue(state, r.parkedAt as number, shortest)) break; // oldest first
    if (isOverdue(state, r.parkedAt as number, overdueBoundOf(state, r))) due.push(r);
  }
  return due;
}

/** Whether a class's queue head has waited past its bound, by the core's one deadline rule. */
export function isOverdue(state: SchedulerState, parkedAt: number, bound: number): boolean {
  return Number.isFinite(bound) && deadlineOf(parkedAt, bound) <= state.now;
}

/**
 * Case 1. Every overdue parked request of a class is tried, oldest first: one that cannot be
 * seated now (its backend is held for it, or only higher classes could make its room) does
 * not keep the overdue requests behind it from their seats.
 */
function seatOverdue(state: SchedulerState, rooms: Rooms): void {
  for (const cls of state.rules.overdueOrder) {
    const tried = new Set<ProgramRecord>();
    // A list, not the live queue: seating a program unparks its requests.
    for (const r of overdueParked(state, cls)) {
      const p = r.program;
      // Parked requests belong to queued programs; a seated program took all of its requests.
      if (p === null || tried.has(p) || !state.queue.has(p)) continue;
      tried.add(p);
      seatOneOverdue(state, rooms, p, r.parkedAt as number);
    }
  }
}

function seatOneOverdue(
  state: SchedulerState,
  rooms: Rooms,
  p: ProgramRecord,
  parkedAt: number,
): boolean {
  const need = seatNeed(state, p);
  let target = chooseTarget(state, rooms, p, need);
  let madeRoom = false;
  let forced = false;
  if (target < 0) {
    target = roomTarget(state, rooms, p, need);
    if (target < 0) return false;
    const b = state.backends[target];
    // A program larger than every backend runs on an emptied one: the one program it may
    // overfill by.
    const fit = Math.min(need, b.capacity as number);
    const missing = fit - (roomAfterFreeing(state, b, markedRoom(b)) as number);
    if (missing > 0) {
      const eligible = (v: ProgramRecord) => state.rules.mayDisplace(v, p.cls);
      makeRoom(state, b, missing, eligible, "overdue program", false);
    }
    rooms[target] = roomOn(state, b);
    madeRoom = true;
    const room = rooms[target] as number;
    forced = room < fit && isOverdue(state, parkedAt, state.config.maxPauseMs);
    // Forced: the backend, its marked programs aside, must have been within capacity, so it
    // ends over capacity by less than this one program.
    if (forced && (roomAfterFreeing(state, b, markedRoom(b)) as number) < 0) return false;
    if (room < fit && !forced) {
      // Marked programs free their room when their turn ends: until then the backend is held
      // for this program (nothing else is placed there in this pass), so it is not overfilled.
      state.effects.log("debug", "backend held for an overdue program", {
        programId: p.id,
        backend: b.id,
        need,
        room: rooms[target],
      });
      rooms[target] = null;
      return false;
    }
  }
  takeRoom(state, rooms, target, need);
  // A forced seat overfills its backend: nothing else goes there in this pass.
  if (forced) rooms[target] = null;
  countPromotion(state, p.cls);
  state.effects.log("info", forced ? "program force-resumed" : "overdue program seated", {
    programId: p.id,
    waitedMs: state.now - parkedAt,
    backend: state.backends[target].id,
    madeRoom,
  });
  resumeProgram(state, p, state.backends[target], forced);
  return true;
}

/**
 * Where room is made for an overdue program: the backend its request is pinned to
 * (pinned-backend.ts) when it is placeable in this pass and of known size; its origin when a
 * pause there is a transfer; else `overdueTarget`. -1 = nowhere in this pass.
 */
function roomTarget(state: SchedulerState, rooms: Rooms, p: ProgramRecord, need: number): number {
  const pin = pinIndex(state, p.pinnedBackend);
  if (pin !== null) {
    return pin >= 0 && rooms[pin] !== null && state.backends[pin].capacity !== null ? pin : -1;
  }
  const origin = p.originBackend === null ? -1 : indexOf(state, p.originBackend);
  const b = origin >= 0 ? state.backends[origin] : undefined;
  return b !== undefined &&
    rooms[origin] !== null &&
    b.healthy &&
    pausePriceOf(state, b).originIsCheapest
    ? origin
    : overdueTarget(state, rooms, need);
}

/**
 * Where room is made for an overdue program: the placeable backend whose room plus what its
 * marked programs will free is largest, among those big enough for `need`; when none is, the
 * largest backend (the program runs there alone). -1 when no backend is placeable in this pass.
 */
function overdueTarget(state: SchedulerState, rooms: Rooms, need: number): number {
  let best = -1;
  let bestKey: [number, number] = [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY];
  for (let i = 0; i < rooms.length; i++) {
    const b = state.backends[i];
    // Not placeable, held for another overdue program, or of unknown size (no room to make).
    if (rooms[i] === null || b.capacity === null) continue;
    const capacity = b.capacity;
    // Big enough ranks first; then most projected room (or, too small all, most capacity).
    const key: [number, number] =
      capacity >= need ? [1, roomAfterFreeing(state, b, markedRoom(b)) as number] : [0, capacity];
    if (key[0] > bestKey[0] || (key[0] === bestKey[0] && key[1] > bestKey[1])) {
      best = i;
      bestKey = key;
    }
  }
  return best;
}

/** Case 2. */
function placeInOrder(state: SchedulerState, rooms: Rooms): void {
  let maxRoom = maxOf(rooms);
  // The need floor is a lower bound of every queued need: below it nothing fits, so the pass
  // ends in O(backends) without sorting the queue.
  if (maxRoom < state.needFloor) return;
  const order = compactQueueOrder(state).sort(state.policies.resumeOrder);
  let maxCapacity = 0;
  for (const b of state.backends) {
    if (isPlaceable(b) && b.capacity !== null && b.capacity > maxCapacity) maxCapacity = b.capacity;
  }
  const rules = state.rules;
  let blockedBelow = Number.POSITIVE_INFINITY; // classes with a larger index are not placed
  let roomsClass = -1;
  let classRooms: Rooms = rooms;
  for (const p of order) {
    // Programs paused just now, to make room for an overdue one, do not come straight back.
    if (p.cls > blockedBelow || p.pausedInPass === state.resumePass) continue;
    if (p.cls !== roomsClass) {
      roomsClass = p.cls;
      classRooms = rooms.map((r, i) =>
        r === null ? null : r - rules.hold(state.backends[i], p.cls),
      );
    }
    const need = seatNeed(state, p);
    const target = need <= maxRoom ? chooseTarget(state, classRooms, p, need) : -1;
    if (target < 0) {
      if (p.parked.length > 0 && need <= maxCapacity && p.cls < blockedBelow) blockedBelow = p.cls;
      continue;
    }
    const wasMax = rooms[target] === maxRoom;
    takeRoom(state, rooms, target, need);
    classRooms[target] = rooms[target] === null ? null : (classRooms[target] as number) - need;
    if (wasMax) maxRoom = maxOf(rooms);
    resumeProgram(state, p, state.backends[target], false);
    if (maxRoom < state.needFloor) return;
  }
}

/** Case 3; a program pinned to another backend (pinned-backend.ts) waits for that one. */
function seatOnIdle(state: SchedulerState): void {
  let order: ProgramRecord[] | null = null;
  let next = 0;
  const waiting = (q: ProgramRecord) => q.parked.length > 0 && state.queue.has(q);
  for (let k = 0; k < state.backends.length; k++) {
    const b = state.backends[k];
    if (!isIdle(b)) continue;
    order ??= compactQueueOrder(state).sort(state.policies.resumeOrder);
    while (next < order.length && !waiting(order[next])) next++;
    let i = next;
    while (
      i < order.length &&
      !(waiting(order[i]) && pinAllows(pinIndex(state, order[i].pinnedBackend), k))
    )
      i++;
    if (i >= order.length) continue;
    const p = order[i];
    if (i === next) next++;
    const need = seatNeed(state, p);
    freeIdleRoom(state, b, p, need);
    state.effects.log("info", "waiting program seated on an idle backend", {
      programId: p.id,
      backend: b.id,
      need,
      capacity: b.capacity,
    });
    resumeProgram(state, p, b, false);
  }
}

/**
 * Idle: placeable, nothing in flight by the router's count (requests of released programs
 * included), and either no program on it at all or the engine's last report shows nothing
 * running or waiting. Router and engine must agree: the router alone would
 * call a backend idle between two turns of a program in a one-second tool call; the engine
 * alone lags by up to a tick.
 */
function isIdle(b: BackendBook): boolean {
  if (!isPlaceable(b) || b.inFlight.size > 0) return false;
  if (activePrograms(b) === 0) return true; // nothing at all: an empty backend
  const t = b.truth;
  return t !== null && t.running === 0 && t.waiting === 0;
}

/**
 * Make `need` fit on an idle backend from its programs in a tool call, smallest first: those
 * `p`'s class may displace are paused; the others (a higher class) lend their room instead
 * (lending.ts): they stay on the backend and book their room again when they send, so a
 * lower class never pauses a higher one, and the books stay within capacity plus this one
 * program while the GPU does not sit idle.
 */
function freeIdleRoom(state: SchedulerState, b: BackendBook, p: ProgramRecord, need: number) {
  const fits = () => (roomOn(state, b) ?? 0) >= need;
  // A backend of unknown capacity has no token room to free: pausing would gain nothing.
  if (b.capacity === null || fits()) return;
  const acting = [...b.programs].filter((v) => v.inFlight.length === 0 && !v.lent);
  acting.sort((x, y) => x.tokens - y.tokens || x.seq - y.seq);
  const lenders: ProgramRecord[] = [];
  for (const v of acting) {
    if (fits()) return;
    if (state.rules.mayDisplace(v, p.cls)) pauseProgram(state, v, "room on an idle backend");
    else lenders.push(v);
  }
  for (const v of lenders) {
    if (fits()) return;
    lendRoom(state, v, "room on an idle backend");
  }
}

/** Healthy backend with the fewest tokens (anonymous requests in flight); or null. */
export function fewestTokensBackend(state: SchedulerState): BackendBook | null {
  const bs = state.backends;
  const i = argMin(
    bs.length,
    (k) => bs[k].healthy,
    (k) => activeTokens(bs[k]),
  );
  return i < 0 ? null : bs[i];
}
