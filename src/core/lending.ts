import { setLent } from "./ledger.ts";
import { observeMedian } from "./median-window.ts";
import type { ProgramRecord } from "./records.ts";
import { TOOL_EMA_WEIGHT } from "./scheduler-config.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/**
 * Room lent by programs in a long tool call. An ACTING program keeps its context booked so
 * that its KV prefix is still cached when its next turn comes; that is worth the room only
 * while the turn is expected soon. Once its tool call has run `lendAfterToolTimes` × the
 * tool time the program is expected to take (at most `lendMaxHoldMs`), its tokens and
 * headroom leave its backend's books (it stays ACTIVE there): waiting programs may use the
 * room. A program expected to take longer than `lendMaxHoldMs` lends at once (at the next
 * tick): room held idle for minutes costs more steps than re-prefilling a context, and this
 * is what keeps tr ahead of the plain proxy when every tool call is long. Without this a finished
 * program that is never released, or a long test suite, held room for ever while the GPU sat
 * idle and waiting programs stayed parked. When the program sends again its room is booked
 * again; if the backend has no room for it by then, it is paused like any program over
 * capacity, and its request waits for the resume pass.
 *
 * The expected tool time is the program's own (a moving average of its tool calls), else the
 * median of the last tool calls of all programs (median-window.ts: one outlier cannot move
 * it far). Before any tool call has been seen it is unknown, and the program holds its room for
 * `lendMaxHoldMs`: an unknown tool time is no evidence of a long one.
 */

export function expectedToolMs(state: SchedulerState, p: ProgramRecord): number | null {
  if (p.toolEma >= 0) return p.toolEma;
  const prior = state.toolPrior.median;
  return Number.isNaN(prior) ? null : prior;
}

/** How long an ACTING program keeps its room booked before lending it (ms). */
export function lendAfterMs(state: SchedulerState, p: ProgramRecord): number {
  const { lendAfterToolTimes, lendMaxHoldMs } = state.config;
  const expected = expectedToolMs(state, p);
  if (expected === null) return lendMaxHoldMs;
  if (expected > lendMaxHoldMs) return 0; // not back soon: its room is worth more to others
  return Math.min(lendMaxHoldMs, lendAfterToolTimes * expected);
}

/** Tick: lend the room of every ACTING program whose tool call has run long. */
export function lendIdleRoom(state: SchedulerState): void {
  const factor = state.config.lendAfterToolTimes;
  if (factor <= 0) return;
  for (const b of state.backends) {
    if (b.actingPrograms === b.lentPrograms) continue;
    for (const p of b.programs) {
      if (p.status !== "ACTING" || p.lent || p.markedForPause) continue;
      if (state.now - p.actingSince < lendAfterMs(state, p)) continue;
      lendRoom(state, p, "tool call ran long");
    }
  }
}

/** Lend an ACTING program's booked room (it stays on its backend). */
export function lendRoom(state: SchedulerState, p: ProgramRecord, why: string): void {
  setLent(p, true);
  state.effects.log("debug", "idle program's room lent", {
    programId: p.id,
    backend: p.backend?.id ?? null,
    tokens: p.tokens,
    actingMs: state.now - p.actingSince,
    why,
  });
}

/**
 * A program sends its next request: the time since its last step ended was its tool call
 * (learned for the lending bound). Its first request has no tool call before it.
 */
export function observeToolTime(state: SchedulerState, p: ProgramRecord): void {
  if (p.steps === 0 || p.status !== "ACTING" || p.inFlight.length > 0) return;
  const ms = state.now - p.actingSince;
  if (!(ms >= 0)) return;
  p.toolEma = p.toolEma < 0 ? ms : p.toolEma + TOOL_EMA_WEIGHT * (ms - p.toolEma);
  observeMedian(state.toolPrior, ms);
}
