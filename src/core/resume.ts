import { activePrograms, activeTokens, isPlaceable, resumeRoomTokens } from "./ledger.ts";
import { argMin } from "./placement.ts";
import { tryPriorityResume } from "./priority/priority-resume.ts";
import { resumeProgram } from "./program-moves.ts";
import { compactQueueOrder } from "./queue.ts";
import type { BackendBook, ProgramRecord, SchedulerState } from "./scheduler-state.ts";

/**
 * The resume pass (tr mode), tried on every tick and whenever capacity frees.
 *
 *   1. Room per placeable backend (healthy, capacity known), decayed if configured; the total
 *      is the sum of the positive rooms. When even the largest room is below the queue's need
 *      floor nothing can be placed, and the pass ends in O(backends).
 *   2. Walk the queue in resume order and keep each program whose need fits the largest room
 *      and still fits the total (skip-and-continue, as the original: reference §3.6 step 3).
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
  if (maxRoom >= state.needFloor) placeFitting(state, rooms, total, maxRoom);
  if (emptyBackends > 0 && state.waitingPrograms > 0) seatOversized(state);
}

/** The queue in resume order (near-sorted already, so the sort is close to linear). */
function orderedQueue(state: SchedulerState): ProgramRecord[] {
  return compactQueueOrder(state).sort(state.policies.resumeOrder);
}

function placeFitting(
  state: SchedulerState,
  rooms: (number | null)[],
  total: number,
  maxRoom: number,
): void {
  const buffer = state.config.bufferPerProgram;
  const kept: ProgramRecord[] = [];
  let left = total;
  for (const p of orderedQueue(state)) {
    const need = p.tokens + buffer;
    if (need > maxRoom || need > left) continue; // case 2
    kept.push(p);
    left -= need;
    if (left < state.needFloor) break;
  }
  // Case 3. Array.prototype.sort is stable: equal needs keep resume order.
  kept.sort((a, b) => b.tokens - a.tokens);
  for (const p of kept) {
    const need = p.tokens + buffer;
    const target = chooseTarget(state, rooms, p, need);
    if (target < 0) continue;
    (rooms[target] as number) -= need;
    resumeProgram(state, p, state.backends[target], false);
  }
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
    const p = queue[next++];
    state.effects.log("info", "oversized program seated on an empty backend", {
      programId: p.id,
      backend: b.id,
      need: p.tokens + state.config.bufferPerProgram,
      capacity: b.capacity,
    });
    resumeProgram(state, p, b, false);
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
