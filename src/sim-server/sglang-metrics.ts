/**
 * The SGLang personality's `/metrics` on the same engine. Scheduler
 * gauges are a snapshot refreshed only at prefill batches and every `decode_log_interval` (40)
 * decode steps, as SGLang's `log_prefill_stats`/`log_decode_stats` do, plus the idle-time
 * refresh every 30 s of `self_check_during_idle` (sgl-project/sglang scheduler). Tokenizer-side
 * counters and latency histograms are per finished request, fed by the HTTP layer.
 */

import type { Engine, HistogramData, StepResult } from "../engine/types.ts";
import type { EngineDriver } from "./engine-driver.ts";
import { createExpositionWriter, type Labels } from "./prom-format.ts";
import type { FinishedRequest, RequestObserver } from "./request-observer.ts";

/** SGLang's `--decode-log-interval` default. */
export const DECODE_LOG_INTERVAL = 40;
/** "During idle time, also collect metrics every 30 seconds" (SGLang scheduler). */
const IDLE_LOG_INTERVAL_S = 30;

/** sgl-project/sglang `python/sglang/srt/metrics/collector.py` bucket lists. */
const TTFT_BUCKETS = [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400];
const ITL_BUCKETS = [
  0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2,
  0.4, 0.6, 0.8, 1, 2, 4, 6, 8,
];
const E2E_BUCKETS = [
  0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400,
];

/** Older SGLang rounds token_usage to two decimals. */
const TOKEN_USAGE_DECIMALS = 100;

export function createHistogramData(buckets: readonly number[]): HistogramData {
  return { buckets, counts: new Array(buckets.length + 1).fill(0), sum: 0, count: 0 };
}

export function observeHistogram(h: HistogramData, value: number): void {
  let i = 0;
  while (i < h.buckets.length && value > h.buckets[i]) i++;
  h.counts[i]++;
  h.sum += value;
  h.count++;
}

interface GaugeSnapshot {
  numRunning: number;
  numQueue: number;
  numUsedTokens: number;
  tokenUsage: number;
  cacheHitRate: number;
  genThroughput: number;
}

export interface SglangMetrics {
  readonly observer: RequestObserver;
  render(): string;
  close(): void;
}

export interface SglangMetricsOptions {
  driver: EngineDriver;
  modelName: string;
  maxTotalNumTokens: number;
}

/** A prefill batch schedules more tokens than the one-per-request of a pure decode step. */
function isPrefillStep(result: StepResult): boolean {
  let sampled = 0;
  for (const o of result.outputs) if (o.newTokenIds.length > 0) sampled++;
  return result.scheduledTokens > sampled;
}

export function createSglangMetrics(options: SglangMetricsOptions): SglangMetrics {
  const { driver, modelName, maxTotalNumTokens } = options;
  const engine: Engine = driver.engine;
  const snap: GaugeSnapshot = {
    numRunning: 0,
    numQueue: 0,
    numUsedTokens: 0,
    tokenUsage: 0,
    cacheHitRate: 0,
    genThroughput: 0,
  };
  let lastRefresh = driver.now();
  let decodeSteps = 0;
  let lastHits = 0;
  let lastQueries = 0;
  let lastGenTokens = 0;
  let lastDecodeLog = driver.now();
  const tok = { prompt: 0, generation: 0, cached: 0, requests: 0, aborted: 0 };
  const ttft = createHistogramData(TTFT_BUCKETS);
  const itl = createHistogramData(ITL_BUCKETS);
  const e2e = createHistogramData(E2E_BUCKETS);

  const refresh = (time: number, kind: "prefill" | "decode" | "idle") => {
    const s = engine.stats();
    snap.numRunning = s.numRunning;
    snap.numQueue = s.numWaiting;
    snap.numUsedTokens = s.numUsedTokens;
    snap.tokenUsage =
      Math.round((s.numUsedTokens / maxTotalNumTokens) * TOKEN_USAGE_DECIMALS) /
      TOKEN_USAGE_DECIMALS;
    if (kind === "prefill") {
      // Per prefill batch, not cumulative: hits / (new + hits) of what this batch admitted.
      const queries = s.prefixCacheQueries - lastQueries;
      if (queries > 0) snap.cacheHitRate = (s.prefixCacheHits - lastHits) / queries;
      lastHits = s.prefixCacheHits;
      lastQueries = s.prefixCacheQueries;
    } else {
      const elapsed = time - lastDecodeLog;
      snap.genThroughput =
        kind === "idle" || elapsed <= 0 ? 0 : (s.generationTokens - lastGenTokens) / elapsed;
      lastGenTokens = s.generationTokens;
      lastDecodeLog = time;
    }
    lastRefresh = time;
  };

  const unsubscribe = driver.onEvent((event) => {
    if (event.kind !== "step") return;
    if (isPrefillStep(event.result)) refresh(event.endTime, "prefill");
    else if (++decodeSteps % DECODE_LOG_INTERVAL === 0) refresh(event.endTime, "decode");
  });

  const observer: RequestObserver = {
    firstToken: (seconds) => observeHistogram(ttft, seconds),
    interToken: (seconds) => observeHistogram(itl, seconds),
    finished(r: FinishedRequest) {
      tok.prompt += r.promptTokens;
      tok.generation += r.completionTokens;
      tok.cached += r.cachedTokens;
      tok.requests++;
      observeHistogram(e2e, r.e2eSeconds);
    },
    aborted: () => {
      tok.aborted++;
    },
  };

  const render = () => {
    const now = driver.now();
    if (!engine.hasWork() && now - lastRefresh >= IDLE_LOG_INTERVAL_S) refresh(now, "idle");
    const w = createExpositionWriter({ created: 0, multiprocess: true });
    const sched: Labels = {
      engine_type: "unified",
      model_name: modelName,
      moe_ep_rank: "0",
      pp_rank: "0",
      tp_rank: "0",
    };
    const g = (name: string, help: string, value: number) => w.gauge(name, help, [[sched, value]]);
    g("sglang:num_running_reqs", "The number of running requests.", snap.numRunning);
    g("sglang:num_used_tokens", "The number of used tokens.", snap.numUsedTokens);
    g("sglang:token_usage", "The token usage.", snap.tokenUsage);
    g(
      "sglang:max_total_num_tokens",
      "Maximum total number of tokens in the KV cache pool.",
      maxTotalNumTokens,
    );
    g("sglang:gen_throughput", "The generation throughput (token/s).", snap.genThroughput);
    g("sglang:num_queue_reqs", "The number of requests in the waiting queue.", snap.numQueue);
    g("sglang:cache_hit_rate", "The prefix cache hit rate.", snap.cacheHitRate);
    const stats = engine.stats();
    w.counter("sglang:num_retracted_requests", "Number of retracted requests.", [
      [sched, stats.numPreemptions],
    ]);
    const tier = stats.hostTier;
    if (tier !== undefined) {
      // HiCache's host pool, in tokens (SGLang creates these gauges only with the tier on).
      const blockSize = engine.config.blockSize;
      g(
        "sglang:hicache_host_used_tokens",
        "The number of used host tokens.",
        tier.usedBlocks * blockSize,
      );
      g(
        "sglang:hicache_host_total_tokens",
        "The total number of host tokens.",
        tier.numBlocks * blockSize,
      );
    }
    const m: Labels = { model_name: modelName };
    const c = (name: string, help: string, value: number) => w.counter(name, help, [[m, value]]);
    c("sglang:prompt_tokens", "Number of prefill tokens processed.", tok.prompt);
    c("sglang:generation_tokens", "Number of generation tokens processed.", tok.generation);
    c("sglang:cached_tokens", "Number of cached prompt tokens.", tok.cached);
    c("sglang:num_requests", "Number of requests processed.", tok.requests);
    c("sglang:num_aborted_requests", "Number of requests aborted.", tok.aborted);
    w.histogram(
      "sglang:time_to_first_token_seconds",
      "Histogram of time to first token in seconds.",
      m,
      ttft,
    );
    w.histogram(
      "sglang:inter_token_latency_seconds",
      "Histogram of inter-token latency in seconds.",
      m,
      itl,
    );
    w.histogram(
      "sglang:e2e_request_latency_seconds",
      "Histogram of End-to-end request latency in seconds",
      m,
      e2e,
    );
    return w.text();
  };

  return { observer, render, close: unsubscribe };
}
