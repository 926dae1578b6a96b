import type { BackendBook } from "../records.ts";
import { roomOn } from "../room.ts";
import type { SchedulerState } from "../scheduler-state.ts";
import type { ClassIndex } from "./priority-classes.ts";
import type { PriorityState } from "./priority-state.ts";

/**
 * Reservations are a floor, not a partition (in KV tokens):
 *   - class h reserves `share_h × capacity` of each backend;
 *   - the part of it class h does not use is held back from every lower class;
 *   - once class h uses its reserved room the hold shrinks one for one;
 *   - a class's own reservation never counts against it (only higher classes hold room).
 * A class's usage counts like the backend's (ledger.ts `usedTokens`): reasoning + w·acting +
 * each program's own headroom (headroom.ts), summed incrementally in the class book. A flat
 * buffer per program here made a class's used room disagree with the room its programs take.
 */

/** Tokens class `cls` uses on `b` (0 when priorities are off). */
export function classUsedTokens(state: SchedulerState, b: BackendBook, cls: ClassIndex): number {
  const book = b.classBooks?.[cls];
  if (book === undefined) return 0;
  const { actingTokenWeight } = state.config;
  return book.reasoningTokens + actingTokenWeight * book.actingTokens + book.headroomTokens;
}

export function reservedTokens(pr: PriorityState, b: BackendBook, cls: ClassIndex): number {
  return b.capacity === null ? 0 : pr.config.classes[cls].reservedShare * b.capacity;
}

/** Reserved room class `cls` leaves unused on `b`: what it holds back from lower classes. */
export function idleReservation(
  state: SchedulerState,
  pr: PriorityState,
  b: BackendBook,
  cls: ClassIndex,
): number {
  const idle = reservedTokens(pr, b, cls) - classUsedTokens(state, b, cls);
  return Math.max(idle, 0);
}

/** Room held back from class `cls` on `b`: the idle reservations of every higher class. */
export function holdFor(state: SchedulerState, b: BackendBook, cls: ClassIndex): number {
  const pr = state.priority;
  if (pr === null) return 0;
  let hold = 0;
  for (let h = 0; h < cls; h++) hold += idleReservation(state, pr, b, h);
  return hold;
}

/** Room class `cls` may take on `b` now (null while the capacity is unknown). */
export function classRoomTokens(
  state: SchedulerState,
  b: BackendBook,
  cls: ClassIndex,
): number | null {
  const room = roomOn(state, b);
  return room === null ? null : room - holdFor(state, b, cls);
}
