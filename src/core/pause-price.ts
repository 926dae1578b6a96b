import type { BackendBook, PausePrice, PausePriceFn } from "./records.ts";
import { HOST_TIER_OVERCOMMIT, TIER_ROTATION_MS, type TierPacking } from "./scheduler-constants.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/**
 * The price of a pause: what it costs to take a program's context off a backend now and bring
 * it back there later. It is one injected policy (`SchedulerPolicies.pausePrice`), beside
 * placement, resume order and pause victims: a function from a backend's books to one of the
 * prices below, read afresh at each admission. Each price answers the four questions the rest
 * of the core asks of it, so no other module tells the two cases apart:
 *
 *   - what admission is bounded by (room.ts, snapshot.ts): `admissionCapacity`;
 *   - whether the engine's report of its GPU bounds the room (room.ts cases 2–4: its queue and
 *     preemptions mean the backend is full), or the engine's queue is its rotation of the
 *     programs within what it holds and the books alone decide (case 5): `truthBoundsRoom`;
 *   - whether an overdue program's room is made on the backend it was paused from, where its
 *     context comes back cheapest (resume.ts): `originIsCheapest`;
 *   - how long a request may wait to come back to the backend before room is made for it
 *     there (wait-bounds.ts case 3, resume.ts's overdue seats): `returnWaitMs`.
 *
 * One rule reads the engine rather than the price: a program paused from a backend whose
 * engine keeps a host tier waits to be resumed there, whatever the price (`keepsEvictedContexts`,
 * resume.ts): even a tier its contexts have outgrown holds part of that program's context,
 * which anywhere else is prefilled again in full.
 *
 * The prices (a third, HOST_TRANSFER_PACKED, below, is the second packed under the GPU):
 *
 *   1. REPREFILL: a paused context is lost to the engine's LRU and computed again on return, so
 *      holding a program at its tool boundary saves the engine from thrashing: the GPU's KV is
 *      the admission bound, the engine's queue means the GPU is full, and a wait to return has
 *      no bound of its own (the class's ageing bound applies).
 *   2. HOST_TRANSFER: the engine keeps the KV it evicts in host memory (vLLM's offloading,
 *      LMCache, SGLang's hierarchical cache) and that tier holds those contexts. A context
 *      pushed off the GPU comes back over the host link at tens of GB/s, a fraction of a
 *      second even for a long one, so the engine's own preemption and reloads already
 *      time-slice the programs. There the bound is what GPU and tier hold together, the
 *      engine's queue within that set is its rotation rather than a sign of a full backend, and
 *      a request held there waits at most the rotation bound before room is made for it.
 */
export const REPREFILL: PausePrice = {
  name: "prefill",
  admissionCapacity: (b) => b.capacity,
  truthBoundsRoom: true,
  originIsCheapest: false,
  returnWaitMs: null,
};

export const HOST_TRANSFER: PausePrice = {
  name: "transfer",
  // Engines copy every computed block to the tier as it is computed (write-through), so the
  // tier already holds what the GPU holds, and together they hold the larger of the two, not
  // the sum.
  admissionCapacity: (b) =>
    b.capacity === null ? null : Math.max(b.capacity, hostTierTokens(b) ?? 0),
  truthBoundsRoom: false,
  originIsCheapest: true,
  returnWaitMs: TIER_ROTATION_MS,
};

/**
 * A transfer, packed under the GPU (`tierPacking: "gpu"`, the `throughput` preset): the pause
 * still costs only a transfer, so an overdue program's room is made where its context is
 * (`originIsCheapest`), but admission is bounded by the GPU's KV as for a re-prefill and the
 * engine's queue means the GPU is full: programs past the GPU wait at their tool boundary,
 * under the class's own bounds, instead of being rotated by the engine. More steps/min, longer
 * waits (src/core/README.md, the throughput/tail frontier).
 */
export const HOST_TRANSFER_PACKED: PausePrice = {
  ...REPREFILL,
  name: "transfer",
  originIsCheapest: true,
};

/**
 * The shipped policy. A backend's pause is a transfer while the engine says it keeps a host
 * tier, its size is known (SGLang's host tokens; vLLM's GiB over the KV bytes per token; or the
 * operator's figure: a size that is not known is never assumed), the tier is larger than the
 * GPU's KV (a tier no larger holds nothing the GPU does not, write-through), and the contexts on
 * the backend and paused from it are within HOST_TIER_OVERCOMMIT times what the tier holds. Past
 * that the tier's LRU loses them and a pause is a prefill again, until programs end or are
 * resumed elsewhere. O(1): the contexts paused from each backend are summed once per tick
 * (`refreshPausedFrom`), as they change only with a new request.
 */
export const tierAwarePausePrice: PausePriceFn = (b) => {
  const host = hostTierTokens(b);
  if (host === null || b.capacity === null || host <= b.capacity) return REPREFILL;
  const onIt = b.reasoningTokens + b.actingTokens + b.lentTokens + b.anonymousTokens;
  return onIt + b.pausedFromTokens <= HOST_TIER_OVERCOMMIT * host ? HOST_TRANSFER : REPREFILL;
};

/** The shipped policy with the tier's contexts packed under the GPU (`tierPacking: "gpu"`). */
export const gpuPackedPausePrice: PausePriceFn = (b) => {
  const price = tierAwarePausePrice(b);
  return price === HOST_TRANSFER ? HOST_TRANSFER_PACKED : price;
};

/** The shipped policy for a tier packing. */
export const pausePriceFor = (packing: TierPacking | undefined): PausePriceFn =>
  packing === "gpu" ? gpuPackedPausePrice : tierAwarePausePrice;

/** The price of a pause from `b` now, by the core's policy. */
export function pausePriceOf(state: SchedulerState, b: BackendBook): PausePrice {
  return state.policies.pausePrice(b);
}

/**
 * The bound on a wait to come back to `b` (ms), or null: none at its price, or `b` is not a
 * backend a program can come back to now (unknown, or unhealthy).
 */
export function returnWaitOf(state: SchedulerState, b: BackendBook | undefined): number | null {
  if (b?.healthy !== true) return null;
  return pausePriceOf(state, b).returnWaitMs;
}

/** Sums, per backend, the contexts of the programs paused from it (once per tick). */
export function refreshPausedFrom(state: SchedulerState): void {
  let anyTier = false;
  for (const b of state.backends) {
    b.pausedFromTokens = 0;
    if (hostTierTokens(b) !== null) anyTier = true;
  }
  if (!anyTier) return;
  for (const p of state.programs.values()) {
    if (p.state !== "PAUSED" || p.originBackend === null) continue;
    const b = state.backendById.get(p.originBackend);
    if (b !== undefined) b.pausedFromTokens += p.tokens;
  }
}

/** Tokens the engine's host KV tier holds, when it says it keeps one and its size is known. */
export function hostTierTokens(b: BackendBook): number | null {
  const m = b.lastMetrics;
  if (m?.hostKvTier !== true || m.hostKvTokens === undefined || !(m.hostKvTokens > 0)) return null;
  return m.hostKvTokens;
}

/**
 * How fast the engine's host link has loaded KV into its GPU, bytes a second over all its
 * loads so far: the measured price of bringing a paused context back there. null while the
 * engine reports no loads (no counters, or nothing loaded yet): unknown, never free.
 */
export function hostLoadBytesPerSecond(b: BackendBook): number | null {
  const m = b.lastMetrics;
  const bytes = m?.hostLoadBytesTotal;
  const seconds = m?.hostLoadSecondsTotal;
  if (bytes === undefined || seconds === undefined || !(bytes > 0) || !(seconds > 0)) return null;
  return bytes / seconds;
}

/**
 * The engine keeps what it evicts in host memory: a program paused from `b` comes back there
 * cheaper than anywhere else, whatever the tier's size (resume.ts waits for its origin).
 */
export function keepsEvictedContexts(b: BackendBook): boolean {
  return b.healthy && b.lastMetrics?.hostKvTier === true;
}
