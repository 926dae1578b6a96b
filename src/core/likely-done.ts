import { deadlineOf } from "./deadline.ts";
import { unmarkForPause } from "./ledger.ts";
import { lendRoom } from "./lending.ts";
import type { ProgramRecord } from "./records.ts";
import { releaseProgram } from "./release.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/**
 * Programs that never say goodbye. Most clients neither release a program nor mark its last
 * request final, so a finished program holds its room until the idle lease. But the model's own
 * answer says when a program is probably done: a final answer ends with `finish_reason: "stop"`
 * and no tool call, where a step of an agent loop ends in a tool call. Such an answer marks its
 * program *likely done*:
 *   - its room is lent at once (tr): waiting work may use it, as during a long tool call
 *     (lending.ts), and a mark for pause is taken back (lending is the cheaper pause: nothing
 *     moves unless the program comes back to a full backend);
 *   - it is released `finalGraceMs` later, unless a request of it comes first. Such a request
 *     finds the program as it left it (its books come back as after any lent tool call) and
 *     the program goes on; nothing is lost.
 * A program that went on after such an answer writes its actions as text, or hands turns to a
 * human: from then on its answers say nothing about its end and it is never marked again.
 * A request for a program released this way counts as a return (released too early), and its
 * new record starts as one that goes on after such answers. A program with running sub-agents
 * is waiting on them, and is neither marked nor released (tree.ts).
 */

/** A step of `p` ended with an answer that stopped without a tool call. */
export function markLikelyDone(state: SchedulerState, p: ProgramRecord): void {
  if (state.config.finalGraceMs <= 0 || p.anonymous || p.goesOnAfterStop) return;
  if (p.likelyDoneAt !== null || p.inFlight.length > 0 || p.parked.length > 0) return;
  // A parent waits on its sub-agents: its end is theirs to tell (tree.ts).
  if (p.children.size > 0) return;
  p.likelyDoneAt = state.now;
  state.likelyDone.add(p);
  state.counters.likelyDoneMarks++;
  const { mode, lendAfterToolTimes } = state.config;
  // `--lend-after 0` (never lend) holds here too.
  if (
    mode === "tr" &&
    lendAfterToolTimes > 0 &&
    p.backend !== null &&
    p.status === "ACTING" &&
    !p.lent
  ) {
    unmarkForPause(p);
    lendRoom(state, p, "answer ended with no tool call");
  }
}

/**
 * A request of `p` arrives: a likely-done mark was wrong, and it goes on. A retry (the same
 * step again, after its backend failed) only takes the mark back: it is no new step.
 */
export function continueIfLikelyDone(
  state: SchedulerState,
  p: ProgramRecord,
  retry: boolean,
): void {
  if (p.likelyDoneAt === null) return;
  p.likelyDoneAt = null;
  state.likelyDone.delete(p);
  if (retry) return;
  p.goesOnAfterStop = true;
  state.counters.likelyDoneContinued++;
}

/** A new program record for an id the rule released a while ago: it came back. */
export function countReturn(state: SchedulerState, p: ProgramRecord): void {
  state.counters.likelyDoneReturns++;
  p.goesOnAfterStop = true;
}

/** Tick: release every likely-done program whose grace has ended. */
export function expireLikelyDone(state: SchedulerState): void {
  const grace = state.config.finalGraceMs;
  for (const p of state.likelyDone) {
    if (deadlineOf(p.likelyDoneAt as number, grace) > state.now) break;
    if (p.children.size > 0 || p.inFlight.length > 0 || p.parked.length > 0) {
      // It started sub-agents since, or has a request under way: it is not done.
      p.likelyDoneAt = null;
      state.likelyDone.delete(p);
      continue;
    }
    releaseProgram(state, p, "likely_done");
    state.counters.likelyDoneReleases++;
  }
}

/** When the first likely-done program's grace ends; null when none is marked. */
export function likelyDoneDeadline(state: SchedulerState): number | null {
  for (const p of state.likelyDone)
    return deadlineOf(p.likelyDoneAt as number, state.config.finalGraceMs);
  return null;
}
