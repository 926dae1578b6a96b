import type { BackendMetricsSample } from "./events.ts";
import type { BackendBook } from "./records.ts";
import { SHARED_CREDIT_SAMPLES } from "./scheduler-config.ts";
import type { SchedulerState } from "./scheduler-state.ts";
import { forgetTruth, recordTruth } from "./truth.ts";

/**
 * Engine truth per backend: capacity, prefix-sharing credit and health. Capacity is re-learned
 * from every sample that carries it (ThunderAgent fetches it once at startup and never again).
 */

/**
 * Prefix-sharing credit from engine truth (ThunderAgent never computes it): tokens we count on the
 * GPU that the engine does not hold. Raw credit of one sample, cases:
 *   1. capacity, KV usage or the waiting count unknown → 0 (a missing gauge is unknown, not
 *      an empty cache);
 *   2. the engine has requests waiting → 0: their tokens are not in the KV pool yet, so the gap
 *      is a backlog, not sharing, and crediting it would hide the very overload the pause
 *      step must see;
 *   3. otherwise `max(0, materialised − kvUsage·capacity)`, kvUsage clamped to 0..1.
 *      `materialised` counts only REASONING programs whose request the engine has prefilled (ledger.ts `creditTokensOf`): a request still prefilling holds a
 *      fraction of its blocks, and counting it made the credit spike (p99 28–34K, max 63K
 *      tokens on the DeepSeek trace) exactly when a resume had just filled the backend.
 * The credit used is the minimum of the last SHARED_CREDIT_SAMPLES raw credits, so a gap the
 * engine shows for a single sample never admits anyone.
 */
function rawCredit(b: BackendBook): number {
  const t = b.truth;
  if (b.capacity === null || t === null || t.kvUsage === null || t.waiting === null) return 0;
  if (t.waiting > 0) return 0;
  return Math.max(0, b.materialisedTokens - t.kvUsage * b.capacity);
}

function sharedCredit(b: BackendBook): number {
  const window = b.creditSamples;
  window.push(rawCredit(b));
  if (window.length > SHARED_CREDIT_SAMPLES) window.shift();
  let min = Number.POSITIVE_INFINITY;
  for (const c of window) if (c < min) min = c;
  return min;
}

/** Apply one successful poll. */
export function applySample(
  state: SchedulerState,
  b: BackendBook,
  sample: BackendMetricsSample,
): void {
  b.consecutiveFailures = 0;
  b.lastMetrics = sample;
  const cap = sample.capacityTokens;
  if (cap !== null && Number.isFinite(cap) && cap > 0) b.capacity = cap;
  recordTruth(b, sample, state.now);
  if (b.capacity === null && !b.capacityWarned) {
    b.capacityWarned = true;
    state.effects.log(
      "warn",
      "backend reports no KV capacity: placing by its engine's report alone",
      {
        backend: b.id,
        rule: "one program per sample while the engine queues nothing; never paused for room",
      },
    );
  }
  b.shared = sharedCredit(b);
  if (!b.healthy) {
    b.healthy = true;
    state.effects.log("info", "backend healthy again", { backend: b.id });
  }
}

/**
 * One failed poll or forward. After `unhealthyAfterFailures` in a row the backend is
 * unhealthy: no new placements (its programs move on their next request). Unhealthy at once:
 *   - a forward the backend refused or reset (`down`): nothing listens there now, and the
 *     request is being retried elsewhere;
 *   - a failed poll of a backend that has never answered one: nothing was ever known of it, so
 *     nothing can be placed there (room.ts), and waiting for more failures would only hold the
 *     first requests of a router whose backends are down until the count is reached, then
 *     answer them 503 all the same.
 * Requests in flight on it run on: a failing `/metrics` says nothing of the engine's streams,
 * and a backend that is really gone ends them itself. Only a successful poll brings it back.
 */
export function recordFailure(
  state: SchedulerState,
  b: BackendBook,
  source: string,
  down = false,
): void {
  b.consecutiveFailures++;
  if (down || (source === "poll" && b.lastMetrics === null))
    b.consecutiveFailures = Math.max(b.consecutiveFailures, state.config.unhealthyAfterFailures);
  if (source === "poll") forgetTruth(b); // what it said last no longer holds
  if (!b.healthy || b.consecutiveFailures < state.config.unhealthyAfterFailures) return;
  b.healthy = false;
  forgetTruth(b);
  b.shared = 0;
  b.creditSamples.length = 0;
  state.effects.log("warn", "backend unhealthy", {
    backend: b.id,
    failures: b.consecutiveFailures,
    source,
  });
}

/** A response started or finished on `b`: the forward path works, so forward failures reset. */
export function recordForwardSuccess(b: BackendBook): void {
  if (b.healthy) b.consecutiveFailures = 0;
}

export function anyHealthy(state: SchedulerState): boolean {
  for (const b of state.backends) if (b.healthy) return true;
  return false;
}
