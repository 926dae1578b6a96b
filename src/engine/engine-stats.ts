/**
 * Cumulative engine statistics with vLLM V1's update rules:
 * prompt tokens are credited in full at the step producing the first token, per-request
 * histograms are observed at finish, client aborts observe nothing and leave
 * `requestSuccess.abort` at 0, as vLLM V1 does (a known vLLM bug: client aborts never increment
 * the `abort` series; https://github.com/vllm-project/vllm/issues/31503).
 */

import {
  build125Buckets,
  createHistogram,
  ITERATION_TOKENS_BUCKETS,
  ITL_BUCKETS,
  REQUEST_LATENCY_BUCKETS,
  TTFT_BUCKETS,
} from "./histogram.ts";
import type { RequestState } from "./request-state.ts";
import type { EngineStats, FinishReason, HostTierStats } from "./types.ts";

export type StatsCounters = Pick<
  EngineStats,
  | "prefixCacheQueries"
  | "prefixCacheHits"
  | "numPreemptions"
  | "promptTokens"
  | "generationTokens"
  | "recomputedTokens"
  | "hostLoadedTokens"
  | "busyTime"
  | "steps"
>;

export interface StatsGauges {
  numRunning: number;
  numWaiting: number;
  kvCacheUsage: number;
  numUsedTokens: number;
  numFreeBlocks: number;
  numCachedBlocks: number;
  hostTier?: HostTierStats;
}

export interface StatsRecorder {
  readonly counters: StatsCounters;
  firstToken(r: RequestState, time: number): void;
  nextToken(r: RequestState, time: number): void;
  iteration(tokens: number): void;
  finished(r: RequestState, reason: FinishReason, time: number): void;
  snapshot(gauges: StatsGauges): EngineStats;
}

export function createStatsRecorder(maxModelLen: number): StatsRecorder {
  const tokenBuckets = build125Buckets(maxModelLen);
  const counters: StatsCounters = {
    prefixCacheQueries: 0,
    prefixCacheHits: 0,
    numPreemptions: 0,
    promptTokens: 0,
    generationTokens: 0,
    recomputedTokens: 0,
    hostLoadedTokens: 0,
    busyTime: 0,
    steps: 0,
  };
  const success: Record<FinishReason, number> = { stop: 0, length: 0, abort: 0 };
  const h = {
    ttft: createHistogram(TTFT_BUCKETS),
    itl: createHistogram(ITL_BUCKETS),
    e2e: createHistogram(REQUEST_LATENCY_BUCKETS),
    queue: createHistogram(REQUEST_LATENCY_BUCKETS),
    prefill: createHistogram(REQUEST_LATENCY_BUCKETS),
    decode: createHistogram(REQUEST_LATENCY_BUCKETS),
    inference: createHistogram(REQUEST_LATENCY_BUCKETS),
    tpot: createHistogram(ITL_BUCKETS),
    promptTokens: createHistogram(tokenBuckets),
    generationTokens: createHistogram(tokenBuckets),
    maxGeneration: createHistogram(tokenBuckets),
    paramsMaxTokens: createHistogram(tokenBuckets),
    prefillKvComputed: createHistogram(tokenBuckets),
    iteration: createHistogram(ITERATION_TOKENS_BUCKETS),
  };

  return {
    counters,
    firstToken(r, time) {
      counters.promptTokens += r.prompt.length;
      h.ttft.observe(time - r.arrivalTime);
    },
    nextToken(r, time) {
      h.itl.observe(time - r.lastTokenTime);
    },
    iteration(tokens) {
      h.iteration.observe(tokens);
    },
    finished(r, reason, time) {
      success[reason]++;
      const generated = r.output.length;
      h.e2e.observe(time - r.arrivalTime);
      h.queue.observe(r.firstScheduledTime - r.arrivalTime);
      h.prefill.observe(r.firstTokenTime - r.firstScheduledTime);
      h.decode.observe(time - r.firstTokenTime);
      h.inference.observe(time - r.firstScheduledTime);
      if (generated > 1) h.tpot.observe((time - r.firstTokenTime) / (generated - 1));
      h.promptTokens.observe(r.prompt.length);
      h.generationTokens.observe(generated);
      h.maxGeneration.observe(r.maxTokens);
      h.paramsMaxTokens.observe(r.maxTokens);
      h.prefillKvComputed.observe(r.prompt.length - Math.max(0, r.numCachedTokens));
    },
    snapshot(g) {
      return {
        ...g,
        ...counters,
        requestSuccess: { ...success },
        timeToFirstToken: h.ttft.snapshot(),
        interTokenLatency: h.itl.snapshot(),
        e2eRequestLatency: h.e2e.snapshot(),
        requestQueueTime: h.queue.snapshot(),
        requestPromptTokens: h.promptTokens.snapshot(),
        requestGenerationTokens: h.generationTokens.snapshot(),
        iterationTokens: h.iteration.snapshot(),
        requestPrefillTime: h.prefill.snapshot(),
        requestDecodeTime: h.decode.snapshot(),
        requestInferenceTime: h.inference.snapshot(),
        requestTimePerOutputToken: h.tpot.snapshot(),
        requestMaxNumGenerationTokens: h.maxGeneration.snapshot(),
        requestParamsMaxTokens: h.paramsMaxTokens.snapshot(),
        requestPrefillKvComputedTokens: h.prefillKvComputed.snapshot(),
      };
    },
  };
}
