/**
 * SGLang: `sglang:*` gauges from `/metrics`, and KV capacity
 * from `GET /get_server_info` → `max_total_num_tokens` (fallback
 * `internal_states[0].memory_usage.token_capacity`, or the `sglang:max_total_num_tokens` gauge
 * of recent releases). Capacity is asked for again on every poll while it is unknown, so
 * a backend that was down at start still gets one.
 */
import type { BackendMetricsSample } from "../core/events.ts";
import { type BackendMetricsClient, type FetchText, fetchOk, PollError } from "./metrics-client.ts";
import { meanOf, parsePrometheusText, sumOf } from "./prometheus-text.ts";

const wanted = (name: string) => name.startsWith("sglang:");

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
  };
}

export function createSglangMetricsClient(
  backendId: string,
  fetchText: FetchText,
): BackendMetricsClient {
  let capacity: number | null = null;
  return {
    backendId,
    async poll(signal) {
      const text = await fetchOk(fetchText, backendId, "/metrics", signal);
      const sample = sglangSampleFromText(text, backendId);
      capacity ??= sample.capacityTokens;
      if (capacity === null) {
        try {
          capacity = capacityFromServerInfo(
            await fetchOk(fetchText, backendId, "/get_server_info", signal),
          );
        } catch {
          // Metrics answered, server info did not: the sample stands, capacity stays unknown.
        }
      }
      return { ...sample, capacityTokens: capacity };
    },
  };
}
