/**
 * The simulated engine's contract: a pure, deterministic step function over a clock it is
 * given. The HTTP driver (src/sim-server) runs it in scaled real time; the
 * cluster simulator runs many of them in virtual time. Times are seconds on the engine's clock.
 */

export interface TimingCoefficients {
  /** Fixed per-step overhead (s). */
  tFixed: number;
  /** Weight-read floor per step (s). */
  tWeights: number;
  /** Seconds per scheduled token (T = tokens in the step). */
  b: number;
  /** Seconds per KV token read by attention (K = Σ context lengths in the step). */
  c: number;
  /** Seconds per prefill-attention unit (A = Σ new·context for prefill chunks). */
  d: number;
}

export interface EngineConfig {
  modelName: string;
  blockSize: number;
  numGpuBlocks: number;
  maxNumSeqs: number;
  maxNumBatchedTokens: number;
  maxModelLen: number;
  enablePrefixCaching: boolean;
  timing: TimingCoefficients;
  /** Seeds output lengths and generated token ids. */
  seed: number;
  /**
   * Mean of the seeded natural output length (where a request without `ignoreEos` samples
   * EOS); default DEFAULT_MEAN_OUTPUT_TOKENS in src/engine/output-sampler.ts.
   */
  meanOutputTokens?: number;
  /** KV bytes one token takes on the GPU, all layers and ranks (sizes the host tier's blocks). */
  kvBytesPerToken?: number;
  /**
   * Host memory for KV in GiB, all ranks together (vLLM `--kv-offloading-size` with the
   * native backend); absent or 0: no host tier.
   */
  kvOffloadingSize?: number;
  /** Host link bandwidth each way (bytes/s): loads host → GPU, stores GPU → host. */
  hostLinkBytesPerSecond?: number;
  /**
   * Scheduling by the requests' `priority` (vLLM `--scheduling-policy priority`, SGLang
   * `--enable-priority-scheduling`); absent: first come, first served, for both personalities.
   */
  priorityScheduling?: PriorityScheduling;
}

/** Whose priority rules the engine follows (src/engine/queue-order.ts says how they differ). */
export type PriorityRules = "vllm" | "sglang";

export interface PriorityScheduling {
  rules: PriorityRules;
  /**
   * SGLang's `--schedule-low-priority-values-first`: lower values go first. Without it SGLang
   * serves higher values first; vLLM always serves lower values first and ignores this.
   */
  lowValuesFirst?: boolean;
  /**
   * SGLang's `--priority-scheduling-preemption-threshold` (default 10): a waiting request may
   * preempt running requests whose priority is worse than its own by more than this. vLLM never
   * preempts for a waiting request and ignores it.
   */
  preemptionThreshold?: number;
}

export interface EngineRequest {
  id: string;
  promptTokens: readonly number[];
  maxTokens: number;
  minTokens: number;
  ignoreEos: boolean;
  /** Engine-clock arrival time (s). */
  arrivalTime: number;
  /**
   * Which of a request's `n` samples this is (default 0). Sample 0 draws the same tokens and
   * length as the prompt alone would; every other index draws its own.
   */
  sampleIndex?: number;
  /**
   * Output fixed in advance, as structured output (a tool call's arguments) fixes it: the
   * request generates exactly these tokens and finishes with `stop` after the last, unless
   * `maxTokens` or the context length cuts it first. Neither `minTokens` nor `ignoreEos`
   * extends it, as a finished grammar admits nothing more. Must not be empty.
   */
  forcedOutput?: readonly number[];
  /**
   * The request's `priority` field, read by a priority-scheduling engine only. Absent: 0 under
   * vLLM's rules; under SGLang's the lowest priority there is, as SGLang gives a request without
   * one.
   */
  priority?: number;
}

export type FinishReason = "stop" | "length" | "abort";

export interface RequestOutput {
  id: string;
  /** Tokens sampled in this step (0 or 1 per step; 0 while prefilling). */
  newTokenIds: number[];
  /** Set when the request finished in this step. */
  finishReason?: FinishReason;
  /** Prompt tokens served from the prefix cache at first admission (GPU hits and host loads). */
  numCachedTokens: number;
  /** Of those, tokens loaded from the host tier (0 without one). */
  numLoadedTokens: number;
  promptTokens: number;
  completionTokens: number;
}

export interface StepResult {
  /** Engine-clock time the step started and its modelled duration (s). */
  startTime: number;
  duration: number;
  scheduledTokens: number;
  numRunning: number;
  outputs: RequestOutput[];
}

/** A histogram as plain data (cumulative bucket counts are derived when rendering). */
export interface HistogramData {
  /** Upper bounds, ascending, without +Inf. */
  buckets: readonly number[];
  /** counts[i] = observations ≤ buckets[i] and > buckets[i-1]; counts[buckets.length] = +Inf bucket. */
  counts: number[];
  sum: number;
  count: number;
}

/** Cumulative engine statistics, what vLLM's /metrics and SGLang's gauges are rendered from. */
export interface EngineStats {
  numRunning: number;
  numWaiting: number;
  /** vLLM semantics: 1 − free / (numGpuBlocks − 1). */
  kvCacheUsage: number;
  /** Tokens held by live requests' blocks (SGLang num_used_tokens). */
  numUsedTokens: number;
  prefixCacheQueries: number;
  prefixCacheHits: number;
  numPreemptions: number;
  promptTokens: number;
  generationTokens: number;
  /** Tokens computed again after a preemption (recompute cost). */
  recomputedTokens: number;
  /** Prompt tokens loaded from the host tier at first admission (0 without one). */
  hostLoadedTokens: number;
  requestSuccess: Record<FinishReason, number>;
  timeToFirstToken: HistogramData;
  interTokenLatency: HistogramData;
  e2eRequestLatency: HistogramData;
  requestQueueTime: HistogramData;
  requestPromptTokens: HistogramData;
  requestGenerationTokens: HistogramData;
  /** Engine-clock seconds the engine has spent stepping (busy time). */
  busyTime: number;
  steps: number;
  /** Free blocks (cached-but-unreferenced blocks count as free). */
  numFreeBlocks?: number;
  /** Blocks holding a hash in the prefix cache (residency, which usage does not show). */
  numCachedBlocks?: number;
  /** `vllm:iteration_tokens_total`: tokens credited per output-producing step. */
  iterationTokens?: HistogramData;
  requestPrefillTime?: HistogramData;
  requestDecodeTime?: HistogramData;
  requestInferenceTime?: HistogramData;
  requestTimePerOutputToken?: HistogramData;
  requestMaxNumGenerationTokens?: HistogramData;
  requestParamsMaxTokens?: HistogramData;
  requestPrefillKvComputedTokens?: HistogramData;
  /** The host tier's figures; absent without one. */
  hostTier?: HostTierStats;
}

/** One direction of the host link: vLLM's `kv_offload_*` series for a `transfer_type`. */
export interface TransferStats {
  bytes: number;
  /** Seconds the link spent on these transfers. */
  seconds: number;
  /** One observation per transfer job, in bytes. */
  sizes: HistogramData;
}

export interface HostTierStats {
  /** GiB configured (`--kv-offloading-size`). */
  sizeGiB: number;
  numBlocks: number;
  usedBlocks: number;
  /** Requests waiting for a load to end (vLLM's WAITING_FOR_REMOTE_KVS). */
  numLoading: number;
  /** Tokens looked up beyond the GPU hit, and those found (`external_prefix_cache_*`). */
  externalQueries: number;
  externalHits: number;
  evictedBlocks: number;
  skippedStores: number;
  toDevice: TransferStats;
  toHost: TransferStats;
}

/**
 * One simulated engine. Pure: no timers, no wall clock, no I/O. The driver calls `step(now)`
 * whenever the engine is idle-or-due; the step's outputs become visible at
 * `now + result.duration`, and the driver must not call `step` again before then.
 */
export interface Engine {
  readonly config: EngineConfig;
  /** Queue a request (validation is the HTTP layer's job). */
  add(request: EngineRequest): void;
  /** Abort a waiting or running request: it leaves the queues and its blocks are freed. */
  abort(id: string, now: number): boolean;
  /** Plan and execute one step starting at `now`; null when there is nothing to do. */
  step(now: number): StepResult | null;
  hasWork(): boolean;
  stats(): EngineStats;
  /** Drop every prefix-cache hash; false (nothing dropped) while any request holds blocks. */
  resetPrefixCache?(): boolean;
}
