import type { SchedulerConfig } from "./api.ts";
import { decayedActingTokens } from "./ledger.ts";
import { pausePriceOf } from "./pause-price.ts";
import type { BackendBook } from "./records.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/**
 * Room on a backend: the one rule every admission path (new program, resume, overdue seat,
 * preemption, the pause step's overflow) reads. Two measures:
 *
 * - belief: `capacity − (reasoning + w·acting − shared + Σ headroom)`, the router's books
 *   (ledger.ts), with each ACTIVE program's learned headroom and lent room left out;
 * - truth: `capacity·(1 − kvUsage) − w·acting − pending − one step's growth of each running
 *   program`, from the engine's last sample (truth.ts). The engine counts a finished request's
 *   blocks as free while they still cache the prefix of a program in its tool call, so the
 *   acting programs' tokens are kept out of it as in the belief; what was dispatched since
 *   the sample and what the running requests will add before the next one are kept out too.
 *
 * Cases:
 *   1. capacity unknown → the engine's report alone (`capacityUnknownRoom`);
 *   2. truth unknown (no sample since the last failure, or no KV usage or waiting gauge) →
 *      the belief alone;
 *   3. the engine has requests waiting or has preempted since the previous sample → the
 *      backend is full, whatever the belief says;
 *   4. otherwise the larger of the two: a pessimistic belief (headroom not needed yet, a
 *      context shared more than the credit shows) never leaves a GPU idle while the engine
 *      shows room, and the belief still admits where the engine has not caught up;
 *   5. a backend where a pause costs a transfer (pause-price.ts): the belief alone, against
 *      what its GPU and host tier hold together. The engine's report is about the GPU, and
 *      its queue there is how it rotates the programs through the GPU; an engine with
 *      nothing running still takes the first waiting program (resume.ts case 3).
 */

export function beliefUsedTokens(b: BackendBook, config: SchedulerConfig, now: number): number {
  const acting = config.useActingTokenDecay ? decayedActingTokens(b, now) : b.actingTokens;
  return (
    b.reasoningTokens +
    b.anonymousTokens +
    config.actingTokenWeight * acting -
    b.shared +
    b.headroomTokens
  );
}

/** Belief room, or null while the capacity is unknown. */
export function beliefRoomTokens(state: SchedulerState, b: BackendBook): number | null {
  const capacity = pausePriceOf(state, b).admissionCapacity(b);
  if (capacity === null) return null;
  return capacity - beliefUsedTokens(b, state.config, state.now);
}

/** The engine is waiting or preempting: full by its own report (case 3). */
export const TRUTH_FULL = Number.NEGATIVE_INFINITY;

/**
 * Truth room (case 4's second term), TRUTH_FULL (case 3), or null when unknown (case 2).
 * One step of growth per running program is its headroom divided by the steps it covers.
 */
export function truthRoomTokens(state: SchedulerState, b: BackendBook): number | null {
  const t = b.truth;
  if (t === null || b.capacity === null || t.kvUsage === null || t.waiting === null) return null;
  // Where a pause costs a transfer the engine's queue and preemptions are its rotation within
  // what GPU and tier hold, not a full backend: the books over that bound decide (case 5).
  if (!pausePriceOf(state, b).truthBoundsRoom) return null;
  if (t.waiting > 0 || t.preempting) return TRUTH_FULL;
  const { actingTokenWeight, growthHeadroomSteps } = state.config;
  const growth = b.reasoningHeadroom / Math.max(1, growthHeadroomSteps);
  return (
    b.capacity * (1 - t.kvUsage) - actingTokenWeight * b.actingTokens - t.pendingTokens - growth
  );
}

/** The room admission reads (cases 1–4). */
export function roomOn(state: SchedulerState, b: BackendBook): number | null {
  return roomAfterFreeing(state, b, 0);
}

/**
 * The room once programs booking `freed` tokens (tokens + headroom, as their backend's books
 * count them) have left `b`. Their leaving raises the belief by `freed` but not the truth,
 * whose sample already counted them as used or pending: projecting the larger of the two
 * measures by `freed` would promise room that will not appear.
 */
export function roomAfterFreeing(state: SchedulerState, b: BackendBook, freed: number) {
  const belief = beliefRoomTokens(state, b);
  if (belief === null) return capacityUnknownRoom(b); // 1
  const truth = truthRoomTokens(state, b);
  if (truth === null) return belief + freed; // 2
  if (truth === TRUTH_FULL) return Math.min(belief + freed, 0); // 3
  return Math.max(belief + freed, truth); // 4
}

/**
 * The room of a backend whose engine does not report its KV capacity (no
 * `vllm:cache_config_info`, no SGLang server info): the books cannot size it, so it is placed
 * on by its engine's report alone, as a plain proxy gated by the engine's queue. It takes one
 * program per sample (CAPACITY_UNKNOWN_ROOM: any need fits, and the resume pass closes it
 * after one placement) while the engine reports nothing waiting, no new preemption and
 * nothing handed to it since the sample (what it had before, the engine counts running or
 * waiting); otherwise 0. Nothing is ever paused there for room. null while nothing is known
 * (no sample, or no waiting gauge): not placeable.
 */
export function capacityUnknownRoom(b: BackendBook): number | null {
  const t = b.truth;
  if (t === null || t.waiting === null) return null;
  if (t.waiting > 0 || t.preempting || t.sentSince > 0) return 0;
  return CAPACITY_UNKNOWN_ROOM;
}

/**
 * Room of a capacity-unknown backend that may take one more program now: finite, so that the
 * placement policies can compare it, and larger than any real room, so that best fit uses
 * it only when no sized backend fits.
 */
export const CAPACITY_UNKNOWN_ROOM = Number.MAX_VALUE;

/** Tokens the marked programs on `b` free when their turn ends (tokens + headroom each). */
export function markedRoom(b: BackendBook): number {
  return b.markedTokens + b.markedHeadroom;
}

/**
 * What the pause step still has to free on `b`: the room it lacks once the marked programs
 * have left. Positive = act.
 */
export function projectedOverflow(state: SchedulerState, b: BackendBook): number {
  const room = roomAfterFreeing(state, b, markedRoom(b));
  return room === null ? 0 : -room;
}
