import { activePrograms, activeTokens, isPlaceable, resumeRoomTokens } from "./ledger.ts";
import { freeRoom } from "./pause-step.ts";
import { argMin } from "./placement.ts";
import { tryPriorityResume } from "./priority/priority-resume.ts";
import { resumeProgram, seatOnEmpty } from "./program-moves.ts";
import { compactQueueOrder } from "./queue.ts";
import type { BackendBook, ProgramRecord, SchedulerState } from "./scheduler-state.ts";

/**
 * The resume pass (tr mode), tried on every tick and whenever capacity frees. A program's need
 * is its tokens plus its headroom (headroom.ts).
 *
 *   1. Room per placeable backend (healthy, capacity known), decayed if configured; the total
 *      is the sum of the positive rooms. When even the largest room is below the queue's need
 *      floor and no program is aged, nothing can be placed and the pass ends in O(backends).
 *   2. Walk the queue in resume order and keep each program whose need fits the largest room
 *      and still fits the total (skip-and-continue, as the original: reference §3.6 step 3).
 *      The first aged program (resume-order.ts) that does not fit gets room made for it on
 *      the backend with the most room (`admitAged`): without this, smaller programs take
 *      every bit of freed room and a large one waits for the forced resume, which then
 *      overflows the backend. Making room at once keeps the backend full instead of holding it
 *      idle while room accumulates (src/core/README.md "Evidence").
 *   3. Place the kept programs largest first: on the origin backend when it still fits (its
 *      prefix may be cached), else where the placement policy says (best fit by default).
 *      A kept program that fits no single backend any more stays queued.
 *   4. A placeable backend left with no active program takes the first waiting program in
 *      resume order even if it exceeds the backend's room: an oversized program must run
 *      somewhere, and an empty backend is the best it will get (issue text).
 */
export function tryResume(state: SchedulerState): void {
  if (state.queue.size === 0) return;
  if (state.priority !== null) {
    tryPriorityResume(state); // the same pass by class: priority/priority-resume.ts
    return;
  }
  const backends = state.backends;
  const rooms: (number | null)[] = new Array(backends.length);
  let total = 0;
  let maxRoom = Number.NEGATIVE_INFINITY;
  let emptyBackends = 0;
  for (let i = 0; i < backends.length; i++) {
    const b = backends[i];
    if (!isPlaceable(b)) {
      rooms[i] = null;
      continue;
    }
    const room = resumeRoomTokens(b, state.config, state.now);
    rooms[i] = room;
    if (room > 0) total += room;
    if (room > maxRoom) maxRoom = room;
    if (activePrograms(b) === 0) emptyBackends++;
  }
  if (maxRoom >= state.needFloor || anyAged(state)) placeFitting(state, rooms, total, maxRoom);
  if (emptyBackends > 0 && state.waitingPrograms > 0) seatOversized(state);
}

/** Whether the oldest parked request has waited `ageingMs` (parked requests are in time order). */
function anyAged(state: SchedulerState): boolean {
  const ageing = state.config.ageingMs;
  if (ageing <= 0) return false;
  for (const r of state.parkedOrder.values()) return (r.parkedAt as number) + ageing <= state.now;
  return false;
}

/**
 * The queue in resume order (near-sorted already, so the sort is close to linear). Marks the
 * aged programs first: the order and the hold of case 2 read `aged`.
 */
function orderedQueue(state: SchedulerState): ProgramRecord[] {
  const queue = compactQueueOrder(state);
  const ageing = state.config.ageingMs;
  for (const p of queue) {
    p.aged =
      ageing > 0 && p.parked.length > 0 && (p.parked[0].parkedAt as number) + ageing <= state.now;
  }
  return queue.sort(state.policies.resumeOrder);
}

function largestRoom(rooms: readonly (number | null)[]): number {
  let max = Number.NEGATIVE_INFINITY;
  for (const r of rooms) if (r !== null && r > max) max = r;
  return max;
}

const positive = (room: number | null) => (room !== null && room > 0 ? room : 0);

function placeFitting(
  state: SchedulerState,
  rooms: (number | null)[],
  total: number,
  maxRoom: number,
): void {
  const kept: ProgramRecord[] = [];
  let left = total;
  let agedSeen = false;
  const queue = orderedQueue(state);
  // Programs paused to make room for an aged one join the queue's array: not in this pass.
  const n = queue.length;
  for (let i = 0; i < n; i++) {
    const p = queue[i];
    const need = p.tokens + p.headroom;
    if (need > maxRoom || need > left) {
      if (p.aged && !agedSeen) {
        agedSeen = true;
        const h = argMaxRoom(rooms);
        if (h < 0) continue;
        const before = positive(rooms[h]);
        rooms[h] = admitAged(state, p, state.backends[h], rooms[h] as number, need);
        left += positive(rooms[h]) - before;
        maxRoom = largestRoom(rooms);
      }
      continue;
    }
    kept.push(p);
    left -= need;
    if (left < state.needFloor) break;
  }
  // Case 3. Array.prototype.sort is stable: equal needs keep resume order.
  kept.sort((a, b) => b.tokens - a.tokens);
  for (const p of kept) {
    const need = p.tokens + p.headroom;
    const target = chooseTarget(state, rooms, p, need);
    if (target < 0) continue;
    (rooms[target] as number) -= need;
    resumeProgram(state, p, state.backends[target], false);
  }
}

/**
 * Case 2 for the first aged program that does not fit, on the backend with the most room:
 * the pause-victim policy frees what is missing beyond what marked programs will free anyway
 * (ACTING victims paused now, REASONING ones marked), then the program is resumed there if it
 * fits; if it still waits for marked programs to end their turn, the backend is held (no other
 * placement there in this pass). A program larger than the whole backend is left to the
 * oversized seating. Returns the backend's room for the rest of the pass (null = held).
 */
function admitAged(
  state: SchedulerState,
  p: ProgramRecord,
  b: BackendBook,
  room: number,
  need: number,
): number | null {
  if (b.capacity === null || need > b.capacity) return room;
  const missing = need - room - (b.markedTokens + b.markedHeadroom);
  if (missing > 0) freeRoom(state, b, missing, "room for an aged program");
  const now = resumeRoomTokens(b, state.config, state.now);
  if (now >= need) {
    resumeProgram(state, p, b, false);
    return now - need;
  }
  state.effects.log("debug", "backend held for an aged program", {
    programId: p.id,
    backend: b.id,
    need,
    room: now,
  });
  return null;
}

function argMaxRoom(rooms: readonly (number | null)[]): number {
  let best = -1;
  let bestRoom = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < rooms.length; i++) {
    const r = rooms[i];
    if (r !== null && r > bestRoom) {
      best = i;
      bestRoom = r;
    }
  }
  return best;
}

function chooseTarget(
  state: SchedulerState,
  rooms: (number | null)[],
  p: ProgramRecord,
  need: number,
): number {
  const origin = p.originBackend;
  if (origin !== null) {
    const i = state.backends.findIndex((b) => b.id === origin);
    const room = i < 0 ? null : rooms[i];
    if (room !== null && room >= need) return i;
  }
  return state.policies.place(rooms, need);
}

function seatOversized(state: SchedulerState): void {
  const queue = orderedQueue(state);
  let next = 0;
  for (const b of state.backends) {
    if (!isPlaceable(b) || activePrograms(b) > 0) continue;
    while (next < queue.length && queue[next].parked.length === 0) next++;
    if (next >= queue.length) return;
    seatOnEmpty(state, queue[next++], b);
  }
}

/** Healthy backend with the fewest tokens (forced resume, anonymous requests); or null. */
export function fewestTokensBackend(state: SchedulerState): BackendBook | null {
  const bs = state.backends;
  const i = argMin(
    bs.length,
    (k) => bs[k].healthy,
    (k) => activeTokens(bs[k]),
  );
  return i < 0 ? null : bs[i];
}
