import { setLent, unmarkForPause } from "./ledger.ts";
import { observeMedian } from "./median-window.ts";
import type { BackendBook, ProgramRecord } from "./records.ts";
import { TOOL_EMA_WEIGHT } from "./scheduler-config.ts";
import { HOST_TIER_MARGIN, HOST_TIER_MIN_GPU_MULTIPLE } from "./scheduler-constants.ts";
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
 *
 * A backend whose engine keeps evicted KV in host memory, with a host tier large enough for
 * the contexts of every program on it and paused from it (`hostHoldsContexts`),
 * changes the trade: a context pushed off the GPU comes back at transfer cost (tens of GB/s, a
 * fraction of a second for a long context) instead of a prefill. Holding room idle for a
 * program in its tool call then buys almost nothing, so there a program lends its room as soon
 * as its turn ends, and a program marked for pause is lent instead of paused: its request, when
 * it comes, is booked again if the backend has room and paused otherwise, the same bound as a
 * pause, decided when it matters.
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

/**
 * Whether `b`'s engine says it keeps evicted KV in host memory, and how much, and that holds
 * the contexts of every program on it (lent ones and anonymous requests included) and of
 * every program paused from it, which waits to come back there (their sum as of the last tick:
 * `refreshPausedFrom`). A tier of unknown size, or one the contexts overflow, is not counted
 * on: its LRU would drop the contexts least recently used, a paused program's first, and those
 * come back by prefill. It starts to hold them at HOST_TIER_MARGIN times their size and stops
 * when they outgrow it (`b.hostHolds`), so that the answer does not flip at every tick. A tier
 * smaller than HOST_TIER_MIN_GPU_MULTIPLE times the GPU's KV never counts: early on it holds
 * the few small contexts there are, and loses them as they grow.
 */
export function hostHoldsContexts(b: BackendBook): boolean {
  const host = b.lastMetrics?.hostKvTier === true ? b.lastMetrics.hostKvTokens : undefined;
  if (host === undefined || b.capacity === null || host < HOST_TIER_MIN_GPU_MULTIPLE * b.capacity) {
    b.hostHolds = false;
    return false;
  }
  const onIt = b.reasoningTokens + b.actingTokens + b.lentTokens + b.anonymousTokens;
  const contexts = onIt + b.pausedFromTokens;
  if (b.hostHolds && host < contexts) b.hostHolds = false;
  else if (!b.hostHolds && host >= HOST_TIER_MARGIN * contexts) b.hostHolds = true;
  return b.hostHolds;
}

/**
 * Tick: the contexts of the programs paused from each backend with a host tier. Once per tick
 * (one pass over the programs): a paused program's context changes only with a new request.
 */
function refreshPausedFrom(state: SchedulerState): void {
  let anyTier = false;
  for (const b of state.backends) {
    b.pausedFromTokens = 0;
    if (b.lastMetrics?.hostKvTier === true) anyTier = true;
  }
  if (!anyTier) return;
  for (const p of state.programs.values()) {
    if (p.state !== "PAUSED" || p.originBackend === null) continue;
    const b = state.backendById.get(p.originBackend);
    if (b !== undefined) b.pausedFromTokens += p.tokens;
  }
}

/** Tick: lend the room of every ACTING program whose tool call has run long. */
export function lendIdleRoom(state: SchedulerState): void {
  const factor = state.config.lendAfterToolTimes;
  if (factor <= 0) return;
  refreshPausedFrom(state);
  for (const b of state.backends) {
    if (b.actingPrograms === b.lentPrograms) continue;
    const atOnce = hostHoldsContexts(b);
    for (const p of b.programs) {
      if (p.status !== "ACTING" || p.lent || p.markedForPause) continue;
      if (!atOnce && state.now - p.actingSince < lendAfterMs(state, p)) continue;
      lendRoom(state, p, atOnce ? "context kept in host memory" : "tool call ran long");
    }
  }
}

/**
 * A program's turn has ended on a backend whose host tier holds every context there: its room
 * is lent at once, a mark for pause taken back (see above). Returns whether it was lent.
 */
export function lendAtTurnEnd(state: SchedulerState, p: ProgramRecord): boolean {
  const b = p.backend;
  const { mode, lendAfterToolTimes } = state.config;
  // The plain proxy books nothing to lend: a lent program could be paused on its return.
  if (mode !== "tr" || b === null || p.status !== "ACTING" || p.lent || lendAfterToolTimes <= 0)
    return false;
  if (!hostHoldsContexts(b)) return false;
  unmarkForPause(p);
  lendRoom(state, p, "context kept in host memory");
  return true;
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
