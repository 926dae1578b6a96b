/**
 * vLLM's `/metrics`. Capacity = `kv_cache_size_tokens` when the
 * build exports it, else `block_size × num_gpu_blocks` from `vllm:cache_config_info`,
 * summed over data-parallel engines; every other family is aggregated over the `engine` label
 * ("match by family name, aggregate over engine"). Deprecated twins are read as fallbacks.
 */
import type { BackendMetricsSample } from "../core/events.ts";
import {
  type BackendMetricsClient,
  type FetchText,
  fetchOk,
  PollError,
  tierField,
} from "./metrics-client.ts";
import {
  meanOf,
  type PromFamilies,
  parsePrometheusText,
  sumOf,
  sumWhere,
} from "./prometheus-text.ts";

const wanted = (name: string) => name.startsWith("vllm:");

function capacityOf(families: PromFamilies): number | null {
  const info = families.get("vllm:cache_config_info");
  if (!info || info.length === 0) return null;
  let total = 0;
  for (const { labels } of info) {
    const direct = Number(labels.kv_cache_size_tokens);
    if (Number.isFinite(direct) && direct > 0) {
      total += direct;
      continue;
    }
    const blocks = Number(labels.num_gpu_blocks);
    const size = Number(labels.block_size);
    if (!Number.isFinite(blocks) || !Number.isFinite(size) || blocks <= 0 || size <= 0) return null;
    total += blocks * size;
  }
  return total;
}

/**
 * The engine's host KV tier: `kv_offloading_size` in GiB, `None` when off; builds older than
 * the offloading flags lack the label (undefined: the engine does not say). vLLM sizes its host
 * pool as whole blocks of `GiB·2^30 / (bytes per token × block_size)`, summed over
 * data-parallel engines; without the model's bytes per token the size stays unknown.
 */
function hostKvTierOf(
  families: PromFamilies,
  kvBytesPerToken: number | null,
): { tier: boolean | undefined; tokens: number | null } {
  const info = families.get("vllm:cache_config_info");
  if (info === undefined || info[0]?.labels.kv_offloading_size === undefined)
    return { tier: undefined, tokens: null };
  let tier = false;
  let sized = kvBytesPerToken !== null;
  let tokens = 0;
  for (const { labels } of info) {
    const gib = Number(labels.kv_offloading_size);
    if (!Number.isFinite(gib) || gib <= 0) continue;
    tier = true;
    const block = Number(labels.block_size);
    if (kvBytesPerToken === null || !(block > 0)) sized = false;
    else tokens += Math.floor((gib * 2 ** 30) / (kvBytesPerToken * block)) * block;
  }
  return { tier, tokens: tier && sized ? tokens : null };
}

/**
 * The host tier's loads into the GPU: the offloading connector's counters, the newer flat
 * ones first, else the older family's CPU_to_GPU child (a newer vLLM exports both). Absent
 * when the engine exports neither.
 */
function hostLoadsOf(f: PromFamilies): {
  hostLoadBytesTotal?: number;
  hostLoadSecondsTotal?: number;
} {
  const loaded = (newer: string, older: string) =>
    sumOf(f, newer) ?? sumWhere(f, older, "transfer_type", "CPU_to_GPU");
  const bytes = loaded("vllm:kv_offload_load_bytes_total", "vllm:kv_offload_total_bytes_total");
  const seconds = loaded("vllm:kv_offload_load_time_total", "vllm:kv_offload_total_time_total");
  return bytes === null || seconds === null
    ? {}
    : { hostLoadBytesTotal: bytes, hostLoadSecondsTotal: seconds };
}

export function vllmSampleFromText(
  text: string,
  backendId = "backend",
  kvBytesPerToken: number | null = null,
): { sample: BackendMetricsSample } {
  const f = parsePrometheusText(text, wanted);
  const host = hostKvTierOf(f, kvBytesPerToken);
  const running = sumOf(f, "vllm:num_requests_running");
  const kv = meanOf(f, "vllm:kv_cache_usage_perc") ?? meanOf(f, "vllm:gpu_cache_usage_perc");
  if (running === null && kv === null) {
    throw new PollError(backendId, "no vllm:* gauges in /metrics (is this a vLLM backend?)");
  }
  return {
    sample: {
      capacityTokens: capacityOf(f),
      kvUsage: kv,
      running,
      waiting: sumOf(f, "vllm:num_requests_waiting"),
      preemptionsTotal: sumOf(f, "vllm:num_preemptions_total"),
      prefixCacheQueriesTotal:
        sumOf(f, "vllm:prefix_cache_queries_total") ??
        sumOf(f, "vllm:gpu_prefix_cache_queries_total") ??
        0,
      prefixCacheHitsTotal:
        sumOf(f, "vllm:prefix_cache_hits_total") ??
        sumOf(f, "vllm:gpu_prefix_cache_hits_total") ??
        0,
      promptTokensTotal: sumOf(f, "vllm:prompt_tokens_total") ?? 0,
      generationTokensTotal: sumOf(f, "vllm:generation_tokens_total") ?? 0,
      ...tierField(host.tier, host.tokens),
      ...hostLoadsOf(f),
    },
  };
}

export function createVllmMetricsClient(
  backendId: string,
  fetchText: FetchText,
  kvBytesPerToken: number | null = null,
): BackendMetricsClient {
  // Capacity is static once the engine has allocated its KV cache; keep the last known value
  // so a scrape that misses the info family does not make it unknown again.
  let capacity: number | null = null;
  return {
    backendId,
    async poll(signal) {
      const text = await fetchOk(fetchText, backendId, "/metrics", signal);
      const { sample } = vllmSampleFromText(text, backendId, kvBytesPerToken);
      capacity = sample.capacityTokens ?? capacity;
      return { ...sample, capacityTokens: capacity };
    },
  };
}
