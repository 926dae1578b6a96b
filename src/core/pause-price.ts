import type { BackendBook } from "./records.ts";
import { HOST_TIER_OVERCOMMIT } from "./scheduler-constants.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/**
 * The price of a pause: what it costs to take a program's context off a backend now and bring
 * it back there later, read at each admission from what the engine last reported and the books
 * hold (the contexts paused from a backend are summed once per tick: `refreshPausedFrom`).
 *
 *   1. "prefill": the engine keeps no host tier, does not say how large it is, keeps one no
 *      larger than the GPU's KV, or the contexts of the programs on the backend and paused from
 *      it are more than HOST_TIER_OVERCOMMIT times what the tier holds. A paused context is
 *      lost to the engine's LRU and computed again on return, so holding a program at its tool
 *      boundary saves the engine from thrashing: the GPU's KV is the admission bound, and the
 *      rest of the core (room, pauses, resumes, ageing) works as on any engine.
 *   2. "transfer": the engine keeps the KV it evicts in host memory (vLLM's offloading, LMCache,
 *      SGLang's hierarchical cache) and that tier holds those contexts, or all but a part its
 *      LRU loses and the engine computes again. A context pushed
 *      off the GPU comes back over the host link at tens of GB/s, a fraction of a second even
 *      for a long one, so the engine's own preemption and reloads already time-slice the
 *      programs. There the bound is what GPU and tier hold together (`admissionCapacity`),
 *      the engine's queue within that set is its rotation rather than a sign of a full backend
 *      (room.ts), and a request held there waits at most the rotation bound before room is made
 *      for it (wait-bounds.ts).
 *
 * The tier's size is what the engine reports (SGLang's host tokens; vLLM's GiB over the KV
 * bytes per token) or what the operator gives; a size that is not known is never assumed.
 * A backend is priced by prefill while its contexts are past that share of the tier, and by
 * transfer again once they are back within it (programs end, or are resumed elsewhere).
 */
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

/**
 * The price on `b` now: its books as they stand, the contexts paused from it as of the last
 * tick (they change only with a new request). O(1), so every admission reads it afresh.
 */
export function pausePriceOf(b: BackendBook): "prefill" | "transfer" {
  const host = hostTierTokens(b);
  // A tier no larger than the GPU's KV holds nothing the GPU does not (write-through).
  if (host === null || b.capacity === null || host <= b.capacity) return "prefill";
  const onIt = b.reasoningTokens + b.actingTokens + b.lentTokens + b.anonymousTokens;
  return onIt + b.pausedFromTokens <= HOST_TIER_OVERCOMMIT * host ? "transfer" : "prefill";
}

/** Tokens the engine's host KV tier holds, when it says it keeps one and its size is known. */
export function hostTierTokens(b: BackendBook): number | null {
  const m = b.lastMetrics;
  if (m?.hostKvTier !== true || m.hostKvTokens === undefined || !(m.hostKvTokens > 0)) return null;
  return m.hostKvTokens;
}

/**
 * What a backend can hold for admission: its GPU's KV, or where a pause costs a transfer, what
 * the GPU and its host tier hold together. Engines copy every computed block to the tier as
 * it is computed (write-through), so the tier already holds what the GPU holds, and together
 * they hold the larger of the two, not the sum. null while the GPU's capacity is unknown.
 */
export function admissionCapacity(b: BackendBook): number | null {
  if (b.capacity === null) return null;
  if (pausePriceOf(b) !== "transfer") return b.capacity;
  return Math.max(b.capacity, hostTierTokens(b) ?? 0);
}

/** A pause from `b` costs a transfer, so a wait there may rotate (healthy backends only). */
export function pauseIsTransfer(b: BackendBook | undefined): boolean {
  return b?.healthy === true && pausePriceOf(b) === "transfer";
}
