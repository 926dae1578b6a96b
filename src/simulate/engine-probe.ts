import type { BackendMetricsSample } from "../core/events.ts";
import type { Engine, EngineStats } from "../engine/types.ts";

/**
 * Reading an in-process engine the way the HTTP runtime reads a vLLM backend's /metrics:
 * the capacity is vLLM's `block_size × num_gpu_blocks`
 * (cache_config_info), the rest are the gauges and counters the metrics clients parse.
 */
export function metricsSample(engine: Engine): BackendMetricsSample {
  return sampleOf(engine, engine.stats());
}

export function sampleOf(engine: Engine, s: EngineStats): BackendMetricsSample {
  return {
    capacityTokens: engine.config.blockSize * engine.config.numGpuBlocks,
    kvUsage: s.kvCacheUsage,
    running: s.numRunning,
    waiting: s.numWaiting,
    preemptionsTotal: s.numPreemptions,
    prefixCacheQueriesTotal: s.prefixCacheQueries,
    prefixCacheHitsTotal: s.prefixCacheHits,
    promptTokensTotal: s.promptTokens,
    generationTokensTotal: s.generationTokens,
    // What vLLM's `cache_config_info` says through `kv_offloading_size`, with the size in
    // tokens a router gets from it and `--kv-bytes-per-token`.
    hostKvTier: s.hostTier !== undefined,
    // And what its offloading connector's load counters say, as vLLM exports them.
    ...(s.hostTier === undefined
      ? {}
      : {
          hostKvTokens: s.hostTier.numBlocks * engine.config.blockSize,
          hostLoadBytesTotal: s.hostTier.toDevice.bytes,
          hostLoadSecondsTotal: s.hostTier.toDevice.seconds,
        }),
  };
}

/** The engine's cumulative counters the report differences over the steady window. */
export interface EngineCounters {
  preemptions: number;
  prefixCacheQueries: number;
  prefixCacheHits: number;
  promptTokens: number;
  generationTokens: number;
  recomputedTokens: number;
  /** Prompt tokens loaded from the host tier at first admission. */
  hostLoadedTokens: number;
  /** Seconds the host link spent loading (every load, preempted requests' too). */
  hostLoadS: number;
  /** Engine-clock seconds spent stepping. */
  busyS: number;
  steps: number;
}

export function engineCounters(s: EngineStats): EngineCounters {
  return {
    preemptions: s.numPreemptions,
    prefixCacheQueries: s.prefixCacheQueries,
    prefixCacheHits: s.prefixCacheHits,
    promptTokens: s.promptTokens,
    generationTokens: s.generationTokens,
    recomputedTokens: s.recomputedTokens,
    hostLoadedTokens: s.hostLoadedTokens,
    hostLoadS: s.hostTier?.toDevice.seconds ?? 0,
    busyS: s.busyTime,
    steps: s.steps,
  };
}

export function counterDelta(end: EngineCounters, start: EngineCounters): EngineCounters {
  return {
    preemptions: end.preemptions - start.preemptions,
    prefixCacheQueries: end.prefixCacheQueries - start.prefixCacheQueries,
    prefixCacheHits: end.prefixCacheHits - start.prefixCacheHits,
    promptTokens: end.promptTokens - start.promptTokens,
    generationTokens: end.generationTokens - start.generationTokens,
    recomputedTokens: end.recomputedTokens - start.recomputedTokens,
    hostLoadedTokens: end.hostLoadedTokens - start.hostLoadedTokens,
    hostLoadS: end.hostLoadS - start.hostLoadS,
    busyS: end.busyS - start.busyS,
    steps: end.steps - start.steps,
  };
}
