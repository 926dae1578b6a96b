import type { BackendMetricsSample } from "./events.ts";
import type { BackendBook, RequestRecord } from "./scheduler-state.ts";

/**
 * The engine's own report on a backend, kept beside the router's books (its belief). The
 * belief is a forecast for choosing whom to pause; the truth says whether the GPU has room
 * now (room.ts weighs the two). Every figure the engine did not report is unknown, never 0.
 */
export interface TruthBook {
  /** Event time of the sample. */
  readonly at: number;
  /** 0..1, or null when the backend does not export its KV usage. */
  readonly kvUsage: number | null;
  readonly running: number | null;
  readonly waiting: number | null;
  /** The preemption counter rose since the previous sample: the engine is out of KV. */
  readonly preempting: boolean;
  /**
   * Tokens the engine's usage may not show yet: requests in flight but not prefilled when the
   * sample was taken, plus every request dispatched to the backend since.
   */
  pendingTokens: number;
}

const known = (v: number | null | undefined): number | null =>
  typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null;

/** Record one successful sample (a failed poll makes the truth unknown: `forgetTruth`). */
export function recordTruth(b: BackendBook, sample: BackendMetricsSample, now: number): void {
  const kv = known(sample.kvUsage);
  const preemptions = known(sample.preemptionsTotal);
  const previous = b.lastPreemptions;
  b.lastPreemptions = preemptions;
  let pending = 0;
  for (const r of b.inFlight) if (!r.prefilled) pending += r.tokens;
  b.truth = {
    at: now,
    kvUsage: kv === null ? null : Math.min(1, kv),
    running: known(sample.running),
    waiting: known(sample.waiting),
    preempting: previous !== null && preemptions !== null && preemptions > previous,
    pendingTokens: pending,
  };
}

/** A poll failed or the backend went unhealthy: what it last said no longer holds. */
export function forgetTruth(b: BackendBook): void {
  b.truth = null;
}

/** A request handed to `b`: the engine's next sample will show it, this one cannot. */
export function addPending(b: BackendBook, r: RequestRecord): void {
  if (b.truth !== null) b.truth.pendingTokens += r.tokens;
}
