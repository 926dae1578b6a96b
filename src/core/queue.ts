import { refreshFootprint } from "./ledger.ts";
import type { ProgramRecord, RequestRecord } from "./records.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/**
 * The global paused queue that pause and resume share, and the requests parked on
 * it. Invariant: a request is parked only while its program is in the queue, so
 * `waitingPrograms` counts queued programs with ≥1 parked request.
 */

export function enqueue(state: SchedulerState, p: ProgramRecord): void {
  if (state.queue.has(p)) return;
  p.state = "PAUSED";
  p.queueSeq = ++state.queueSeq;
  state.queue.add(p);
  state.queueOrder.push(p);
  // Stale entries are dropped on each resume pass; compact here too should passes be rare.
  if (state.queueOrder.length > 2 * state.queue.size + QUEUE_ORDER_SLACK) compactQueueOrder(state);
  lowerNeedFloor(state, p);
  if (p.parked.length > 0) state.waitingPrograms++;
}

/** Stale entries tolerated in `queueOrder` before an out-of-pass compaction (memory bound). */
const QUEUE_ORDER_SLACK = 1024;

/**
 * `queueOrder` without stale entries (resumed, released, listed twice), in its current order;
 * also re-derives the exact need floor. O(entries).
 */
export function compactQueueOrder(state: SchedulerState): ProgramRecord[] {
  const stamp = ++state.orderStamp;
  const live: ProgramRecord[] = [];
  let floor = Number.POSITIVE_INFINITY;
  for (const p of state.queueOrder) {
    if (p.orderStamp === stamp || !state.queue.has(p)) continue;
    p.orderStamp = stamp;
    live.push(p);
    if (p.tokens < floor) floor = p.tokens;
  }
  state.queueOrder = live;
  state.needFloor = floor + state.config.bufferPerProgram;
  return live;
}

function lowerNeedFloor(state: SchedulerState, p: ProgramRecord): void {
  const need = p.tokens + state.config.bufferPerProgram;
  if (need < state.needFloor) state.needFloor = need;
}

/**
 * Recompute a program's footprint (books follow). Use this rather than the ledger's
 * `refreshFootprint` for a program that may be queued: a shrinking need must lower the
 * queue's need floor, or the resume pass could skip a program that now fits.
 */
export function refreshProgram(state: SchedulerState, p: ProgramRecord): void {
  refreshFootprint(p);
  if (state.queue.has(p)) lowerNeedFloor(state, p);
}

export function dequeue(state: SchedulerState, p: ProgramRecord): void {
  if (!state.queue.delete(p)) return;
  if (p.parked.length > 0) state.waitingPrograms--;
}

export function park(state: SchedulerState, p: ProgramRecord, r: RequestRecord): void {
  r.parkedAt = state.now;
  p.parked.push(r);
  if (p.parked.length === 1 && state.queue.has(p)) state.waitingPrograms++;
  state.parkedOrder.set(r.id, r);
  if (r.maxWaitMs !== null) state.deadlines.add(r);
  if (state.priority !== null) state.priority.parked[r.cls].set(r.id, r);
}

/** Remove a parked request from every index (dispatch, reject or client gone). */
export function unpark(state: SchedulerState, r: RequestRecord): void {
  state.parkedOrder.delete(r.id);
  state.deadlines.delete(r);
  if (state.priority !== null) state.priority.parked[r.cls].delete(r.id);
  const p = r.program;
  if (p === null) return;
  const i = p.parked.indexOf(r);
  if (i < 0) return;
  p.parked.splice(i, 1);
  if (p.parked.length === 0 && state.queue.has(p)) state.waitingPrograms--;
  // A pin lasts while a pinned request of the program waits (pinned-backend.ts).
  p.pinnedBackend = null;
  for (const q of p.parked) p.pinnedBackend ??= q.pinnedBackend;
  refreshProgram(state, p);
}

/** Record activity: moves the program to the back of the idle-lease order. */
export function touch(state: SchedulerState, p: ProgramRecord): void {
  p.lastActivity = state.now;
  state.idleOrder.delete(p);
  state.idleOrder.add(p);
}

/** The first item of an iteration (the oldest parked request of a class), or undefined. */
export function firstOf<T>(items: Iterable<T>): T | undefined {
  for (const item of items) return item;
  return undefined;
}
