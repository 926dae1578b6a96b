/**
 * vLLM V1's `/metrics` (v0.11-era shape) rendered from EngineStats. Family order follows the
 * registration order in vllm-project/vllm `vllm/v1/metrics/loggers.py` (`PrometheusStatLogger`),
 * with `vllm:cache_config_info` last because it is registered in `log_engine_initialized`.
 * Names, HELP strings and label sets are vLLM's (v0.11-era).
 */

import type { EngineStats, HistogramData, HostTierStats, TransferStats } from "../engine/types.ts";
import { createExpositionWriter, type ExpositionWriter, type Labels } from "./prom-format.ts";

export interface VllmMetricsInfo {
  modelName: string;
  blockSize: number;
  numGpuBlocks: number;
  enablePrefixCaching: boolean;
  /** `--kv-offloading-size` in GiB; 0 without a host tier. */
  kvOffloadingSize: number;
  /** Unix time (s) the server started: every `_created` sample (fixed). */
  createdAt: number;
  /**
   * `--vllm-metrics`: `new` (default) writes the offloading connector's series as the vLLM
   * releases that emit both families do, `old` only the deprecated `transfer_type` family.
   */
  vllmMetrics?: "new" | "old";
}

/** Data-parallel engine index; a single engine is "0". */
const ENGINE_INDEX = "0";

/**
 * Pre-created at 0 on a fresh server. vLLM (v0.11-era) lists five reasons; the
 * engine only produces the first three, `error` and `repetition` stay at 0.
 */
const FINISHED_REASONS = ["stop", "length", "abort", "error", "repetition"] as const;

/** Python's `str()` of a float: `200.0`, `0.5`. */
const pythonFloat = (v: number) => (Number.isInteger(v) ? `${v}.0` : String(v));

/**
 * vLLM's CacheConfig label set; values are Python `str()` reprs. The set is that of the
 * builds that had both `swap_space` and the KV offloading fields (early 2026), where the
 * offloading backend defaults to `native` and the size to `None`.
 */
function cacheConfigLabels(info: VllmMetricsInfo): Labels {
  return {
    block_size: String(info.blockSize),
    cache_dtype: "auto",
    calculate_kv_scales: "False",
    cpu_offload_gb: "0",
    enable_prefix_caching: info.enablePrefixCaching ? "True" : "False",
    engine: ENGINE_INDEX,
    gpu_memory_utilization: "0.9",
    is_attention_free: "False",
    kv_offloading_backend: "native",
    kv_offloading_size: info.kvOffloadingSize > 0 ? pythonFloat(info.kvOffloadingSize) : "None",
    // vLLM never fills it, even with a host tier: the host's size is `kv_offloading_size`.
    num_cpu_blocks: "None",
    num_gpu_blocks: String(info.numGpuBlocks),
    num_gpu_blocks_override: "None",
    prefix_caching_hash_algo: "sha256",
    sliding_window: "None",
    swap_space: "4",
  };
}

export function renderVllmMetrics(stats: EngineStats, info: VllmMetricsInfo): string {
  const w = createExpositionWriter({ created: info.createdAt });
  const base: Labels = { model_name: info.modelName, engine: ENGINE_INDEX };
  const one = (value: number): Array<[Labels, number]> => [[base, value]];

  w.gauge(
    "vllm:num_requests_running",
    "Number of requests in model execution batches.",
    one(stats.numRunning),
  );
  w.gauge(
    "vllm:num_requests_waiting",
    "Number of requests waiting to be processed.",
    one(stats.numWaiting),
  );
  w.gauge(
    "vllm:kv_cache_usage_perc",
    "KV-cache usage. 1 means 100 percent usage.",
    one(stats.kvCacheUsage),
  );
  w.counter(
    "vllm:prefix_cache_queries",
    "Prefix cache queries, in terms of number of queried tokens.",
    one(stats.prefixCacheQueries),
  );
  w.counter(
    "vllm:prefix_cache_hits",
    "Prefix cache hits, in terms of number of cached tokens.",
    one(stats.prefixCacheHits),
  );
  const tier = stats.hostTier;
  if (tier !== undefined) {
    w.counter(
      "vllm:external_prefix_cache_queries",
      "External prefix cache queries from KV connector cross-instance cache sharing, in terms of number of queried tokens.",
      one(tier.externalQueries),
    );
    w.counter(
      "vllm:external_prefix_cache_hits",
      "External prefix cache hits from KV connector cross-instance cache sharing, in terms of number of cached tokens.",
      one(tier.externalHits),
    );
  }
  w.counter(
    "vllm:num_preemptions",
    "Cumulative number of preemption from the engine.",
    one(stats.numPreemptions),
  );
  w.counter("vllm:prompt_tokens", "Number of prefill tokens processed.", one(stats.promptTokens));
  w.counter(
    "vllm:generation_tokens",
    "Number of generation tokens processed.",
    one(stats.generationTokens),
  );
  w.counter(
    "vllm:request_success",
    "Count of successfully processed requests.",
    FINISHED_REASONS.map((reason): [Labels, number] => [
      { ...base, finished_reason: reason },
      reason === "stop" || reason === "length" || reason === "abort"
        ? stats.requestSuccess[reason]
        : 0,
    ]),
  );
  // Optional histograms render only when the engine keeps them (EngineStats marks them `?`).
  const h = (name: string, help: string, data: HistogramData | undefined) => {
    if (data !== undefined) w.histogram(name, help, base, data);
  };
  h("vllm:request_prompt_tokens", "Number of prefill tokens processed.", stats.requestPromptTokens);
  h(
    "vllm:request_generation_tokens",
    "Number of generation tokens processed.",
    stats.requestGenerationTokens,
  );
  h(
    "vllm:iteration_tokens_total",
    "Histogram of number of tokens per engine_step.",
    stats.iterationTokens,
  );
  h(
    "vllm:request_max_num_generation_tokens",
    "Histogram of maximum number of requested generation tokens.",
    stats.requestMaxNumGenerationTokens,
  );
  h(
    "vllm:request_params_max_tokens",
    "Histogram of the max_tokens request parameter.",
    stats.requestParamsMaxTokens,
  );
  h(
    "vllm:request_prefill_kv_computed_tokens",
    "Histogram of new KV tokens computed during prefill (excluding cached tokens).",
    stats.requestPrefillKvComputedTokens,
  );
  h(
    "vllm:time_to_first_token_seconds",
    "Histogram of time to first token in seconds.",
    stats.timeToFirstToken,
  );
  h(
    "vllm:inter_token_latency_seconds",
    "Histogram of inter-token latency in seconds.",
    stats.interTokenLatency,
  );
  h(
    "vllm:request_time_per_output_token_seconds",
    "Histogram of time_per_output_token_seconds per request.",
    stats.requestTimePerOutputToken,
  );
  h(
    "vllm:e2e_request_latency_seconds",
    "Histogram of e2e request latency in seconds.",
    stats.e2eRequestLatency,
  );
  h(
    "vllm:request_queue_time_seconds",
    "Histogram of time spent in WAITING phase for request.",
    stats.requestQueueTime,
  );
  h(
    "vllm:request_inference_time_seconds",
    "Histogram of time spent in RUNNING phase for request.",
    stats.requestInferenceTime,
  );
  h(
    "vllm:request_prefill_time_seconds",
    "Histogram of time spent in PREFILL phase for request.",
    stats.requestPrefillTime,
  );
  h(
    "vllm:request_decode_time_seconds",
    "Histogram of time spent in DECODE phase for request.",
    stats.requestDecodeTime,
  );
  if (tier !== undefined) renderOffloadSeries(w, base, tier, info.vllmMetrics ?? "new");
  w.gauge("vllm:cache_config_info", "Information of the LLMEngine CacheConfig", [
    [cacheConfigLabels(info), 1],
  ]);
  return w.text();
}

/**
 * vLLM's offloading connector's series. Its deprecated family, one child per direction of the
 * host link labelled `transfer_type`, is the only one of older releases. Newer ones register
 * it first, both children up front with loads (CPU_to_GPU) first, then the flat
 * `kv_offload_load_*` / `kv_offload_store_*` series, and feed both from the same transfers, so
 * the two families always agree.
 */
function renderOffloadSeries(
  w: ExpositionWriter,
  base: Labels,
  tier: HostTierStats,
  shape: "new" | "old",
): void {
  const load = ["CPU_to_GPU", tier.toDevice] as const;
  const store = ["GPU_to_CPU", tier.toHost] as const;
  // `old` keeps the order the deprecated family is written in without the new one: stores first.
  const directions = shape === "new" ? [load, store] : [store, load];
  const each = <T>(value: (t: TransferStats) => T) =>
    directions.map(([type, t]): [Labels, T] => [{ ...base, transfer_type: type }, value(t)]);
  w.counter(
    "vllm:kv_offload_total_bytes",
    "Number of bytes offloaded by KV connector",
    each((t) => t.bytes),
  );
  w.counter(
    "vllm:kv_offload_total_time",
    "Total time measured by all KV offloading operations",
    each((t) => t.seconds),
  );
  w.histograms(
    "vllm:kv_offload_size",
    "Histogram of KV offload transfer size, in bytes.",
    each((t) => t.sizes),
  );
  if (shape === "old") return;
  const one = (value: number): Array<[Labels, number]> => [[base, value]];
  const { toDevice: l, toHost: st } = tier;
  w.counter(
    "vllm:kv_offload_load_bytes",
    "Total bytes loaded from offload storage to GPU.",
    one(l.bytes),
  );
  w.counter(
    "vllm:kv_offload_load_time",
    "Total load time from offload storage to GPU, in seconds.",
    one(l.seconds),
  );
  w.histogram(
    "vllm:kv_offload_load_size",
    "Histogram of KV offload load operation size, in bytes.",
    base,
    l.sizes,
  );
  w.counter(
    "vllm:kv_offload_store_bytes",
    "Total bytes stored from GPU to offload storage.",
    one(st.bytes),
  );
  w.counter(
    "vllm:kv_offload_store_time",
    "Total store time from GPU to offload storage, in seconds.",
    one(st.seconds),
  );
  w.histogram(
    "vllm:kv_offload_store_size",
    "Histogram of KV offload store operation size, in bytes.",
    base,
    st.sizes,
  );
}
