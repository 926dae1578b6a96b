import { setHeadroom } from "./ledger.ts";
import { observeMedian } from "./median-window.ts";
import type { ProgramRecord } from "./records.ts";
import { GROWTH_EMA_WEIGHT, GROWTH_HEADROOM_CAP_TOKENS } from "./scheduler-config.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/**
 * Headroom per active program: room kept free so that the programs on a backend can take
 * their next steps before a pause can free anything. ThunderAgent reserves a flat
 * `BUFFER_PER_PROGRAM` (100 tokens); an agent step grows a context by its tool output plus its
 * completion, several times that on real traces (scheduler-config.ts GROWTH_HEADROOM_STEPS),
 * so the flat buffer over-admits and the engine preempts. With `steps` = `growthHeadroomSteps`
 * and `cap` = GROWTH_HEADROOM_CAP_TOKENS, cases:
 *   1. steps = 0 → `bufferPerProgram` (ThunderAgent exactly);
 *   2. the program has seen two step ends → max(buffer, min(cap, steps × its growth average));
 *   3. otherwise → max(buffer, min(cap, steps × the all-programs prior)), the median of the
 *      last PRIOR_WINDOW step growths (one outlier cannot move it far), which is the buffer
 *      before any program has shown a growth.
 * Each program's value is stored on it and its backend keeps the sum (ledger.ts), so reading a
 * backend's `used` stays O(1); a value changes only when its program ends a step.
 */

export function headroomOf(state: SchedulerState, p: ProgramRecord): number {
  const { bufferPerProgram, growthHeadroomSteps } = state.config;
  if (growthHeadroomSteps === 0) return bufferPerProgram; // 1
  const prior = state.growthPrior.median;
  const growth = p.growthEma >= 0 ? p.growthEma : Number.isNaN(prior) ? 0 : prior; // 2, 3
  return Math.max(
    bufferPerProgram,
    Math.min(GROWTH_HEADROOM_CAP_TOKENS, growthHeadroomSteps * growth),
  );
}

/** Re-derive a program's headroom (books follow). */
export function refreshHeadroom(state: SchedulerState, p: ProgramRecord): void {
  setHeadroom(p, headroomOf(state, p));
}

/**
 * A queued program's need: its tokens plus the headroom it books when seated (re-derived
 * here, since what was learned while it waited changes it).
 */
export function seatNeed(state: SchedulerState, p: ProgramRecord): number {
  refreshHeadroom(state, p);
  return p.tokens + p.headroom;
}

/**
 * A step ended with the engine's total `tokens` (usage): its growth since the previous step
 * end feeds the program's average and the all-programs prior. A shrinking context (a rewritten
 * or compacted history) counts as no growth.
 */
export function observeStepEnd(state: SchedulerState, p: ProgramRecord, tokens: number): void {
  if (!Number.isFinite(tokens) || tokens < 0) return;
  const last = p.lastStepTokens;
  p.lastStepTokens = tokens;
  if (last < 0) return;
  const growth = Math.max(0, tokens - last);
  p.growthEma = p.growthEma < 0 ? growth : p.growthEma + GROWTH_EMA_WEIGHT * (growth - p.growthEma);
  observeMedian(state.growthPrior, growth);
  refreshHeadroom(state, p);
}
