/**
 * SGLang: `sglang:*` gauges from `/metrics`, and KV capacity
 * from `GET /get_server_info` → `max_total_num_tokens` (fallback
 * `internal_states[0].memory_usage.token_capacity`, or the `sglang:max_total_num_tokens` gauge
 * of recent releases). The gauge, when the release exports it, is read on every poll. Server
 * info is asked for on every poll while the capacity is unknown (a backend that was down at
 * start still gets one), after any failed poll (a restarted server may have another KV size),
 * and every CAPACITY_REFRESH_POLLS polls otherwise, so a changed capacity is seen.
 */
import type { BackendMetricsSample } from "../core/events.ts";
import {
  type BackendMetricsClient,
  type FetchText,
  fetchOk,
  PollError,
  tierField,
} from "./metrics-client.ts";
import { meanOf, parsePrometheusText, sumOf } from "./prometheus-text.ts";

const wanted = (name: string) => name.startsWith("sglang:");

/** Polls between two reads of server info once the capacity is known (1 min at 5 s ticks). */
export const CAPACITY_REFRESH_POLLS = 12;

export function capacityFromServerInfo(text: string): number | null {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return null;
  }
  if (!doc || typeof doc !== "object") return null;
  const top = (doc as Record<string, unknown>).max_total_num_tokens;
  if (typeof top === "number" && top > 0) return top;
  const states = (doc as Record<string, unknown>).internal_states;
  if (Array.isArray(states)) {
    const cap = (states[0] as { memory_usage?: { token_capacity?: unknown } })?.memory_usage
      ?.token_capacity;
    if (typeof cap === "number" && cap > 0) return cap;
  }
  return null;
}

export function sglangSampleFromText(text: string, backendId = "backend"): BackendMetricsSample {
  const f = parsePrometheusText(text, wanted);
  const running = sumOf(f, "sglang:num_running_reqs");
  const usage = meanOf(f, "sglang:token_usage");
  if (running === null && usage === null) {
    throw new PollError(
      backendId,
      "no sglang:* gauges in /metrics (started with --enable-metrics?)",
    );
  }
  const prompt = sumOf(f, "sglang:prompt_tokens_total") ?? 0;
  const hostTier = sumOf(f, "sglang:hicache_host_total_tokens");
  return {
    capacityTokens: sumOf(f, "sglang:max_total_num_tokens"),
    kvUsage: usage,
    running,
    waiting: sumOf(f, "sglang:num_queue_reqs"),
    preemptionsTotal: sumOf(f, "sglang:num_retracted_requests_total"),
    // SGLang has no query/hit counter pair; prompt tokens and cached prompt tokens play the part.
    prefixCacheQueriesTotal: prompt,
    prefixCacheHitsTotal: sumOf(f, "sglang:cached_tokens_total") ?? 0,
    promptTokensTotal: prompt,
    generationTokensTotal: sumOf(f, "sglang:generation_tokens_total") ?? 0,
    // HiCache's gauges exist only with the tier on.
    ...tierField(hostTier === null ? undefined : hostTier > 0, hostTier),
  };
}

export function createSglangMetricsClient(
  backendId: string,
  fetchText: FetchText,
): BackendMetricsClient {
  let capacity: number | null = null;
  let pollsSinceInfo = 0;
  return {
    backendId,
    async poll(signal) {
      let text: string;
      try {
        text = await fetchOk(fetchText, backendId, "/metrics", signal);
      } catch (err) {
        pollsSinceInfo = CAPACITY_REFRESH_POLLS; // it may come back with another KV size
        throw err;
      }
      const sample = sglangSampleFromText(text, backendId);
      if (sample.capacityTokens !== null) capacity = sample.capacityTokens;
      else if (capacity === null || ++pollsSinceInfo >= CAPACITY_REFRESH_POLLS) {
        try {
          const info = capacityFromServerInfo(
            await fetchOk(fetchText, backendId, "/get_server_info", signal),
          );
          capacity = info ?? capacity;
          pollsSinceInfo = 0;
        } catch {
          // Metrics answered, server info did not: the sample stands, the capacity as it was.
        }
      }
      return { ...sample, capacityTokens: capacity };
    },
  };
}
