import type { BackendMetricsSample } from "./events.ts";
import type { BackendBook, RequestRecord } from "./records.ts";

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
    sentSince: 0,
  };
}

/** A poll failed or the backend went unhealthy: what it last said no longer holds. */
export function forgetTruth(b: BackendBook): void {
  b.truth = null;
}

/** A request handed to `b`: the engine's next sample will show it, this one cannot. */
export function addPending(b: BackendBook, r: RequestRecord): void {
  if (b.truth === null) return;
  b.truth.pendingTokens += r.tokens;
  b.truth.sentSince++;
}
