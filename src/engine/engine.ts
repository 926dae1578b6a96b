/**
 * `createEngine`: the simulated vLLM V1 engine as a pure step function (no timers,
 * no wall clock, no I/O). Each `step(now)` plans a batch (scheduler.ts), prices it with the timing model
 * (timing.ts), advances every scheduled request and returns the outputs, which become visible
 * at `now + duration`. No wall clock, no timers, no randomness beyond the seeded sampler.
 */

import { Errors } from "../errors.ts";
import { createBlockPool } from "./block-pool.ts";
import { createStatsRecorder } from "./engine-stats.ts";
import { fingerprint } from "./hash.ts";
import { createHostTier, type HostTier } from "./host-tier.ts";
import { createKvCacheManager } from "./kv-cache-manager.ts";
import {
  DEFAULT_MEAN_OUTPUT_TOKENS,
  generatedTokenId,
  sampleFingerprint,
} from "./output-sampler.ts";
import { createQueueOrder } from "./queue-order.ts";
import { createRequestState, numTokens, type RequestState } from "./request-state.ts";
import { createScheduler, type ScheduledBatch } from "./scheduler.ts";
import { stepDuration } from "./timing.ts";
import type {
  Engine,
  EngineConfig,
  EngineRequest,
  FinishReason,
  RequestOutput,
  StepResult,
} from "./types.ts";
import { validateEngineConfig } from "./validate-config.ts";

/** One request as `inspect()` shows it. */
export interface RequestView {
  id: string;
  numTokens: number;
  numComputed: number;
  numBlocks: number;
  outputTokens: number;
  numPreemptions: number;
}

/** Queue and block-pool internals, for tests, invariant checks and the simulator's probes. */
export interface EngineInspection {
  running: RequestView[];
  waiting: RequestView[];
  numFreeBlocks: number;
  numReferencedBlocks: number;
  numCachedBlocks: number;
}

export interface SimulatedEngine extends Engine {
  inspect(): EngineInspection;
}

const view = (r: RequestState): RequestView => ({
  id: r.id,
  numTokens: numTokens(r),
  numComputed: r.numComputed,
  numBlocks: r.blocks.length,
  outputTokens: r.output.length,
  numPreemptions: r.numPreemptions,
});

export function createEngine(config: EngineConfig): SimulatedEngine {
  validateEngineConfig(config);
  const pool = createBlockPool({ numGpuBlocks: config.numGpuBlocks, blockSize: config.blockSize });
  const kv = createKvCacheManager({ pool, enablePrefixCaching: config.enablePrefixCaching });
  const stats = createStatsRecorder(config.maxModelLen);
  const counters = stats.counters;
  const queues = { running: [] as RequestState[], waiting: [] as RequestState[] };
  const byId = new Map<string, RequestState>();
  const tier: HostTier | null =
    (config.kvOffloadingSize ?? 0) > 0
      ? createHostTier({
          sizeGiB: config.kvOffloadingSize as number,
          blockSize: config.blockSize,
          kvBytesPerToken: config.kvBytesPerToken as number,
          linkBytesPerSecond: config.hostLinkBytesPerSecond as number,
        })
      : null;
  const order = createQueueOrder(config.priorityScheduling);
  const schedule = createScheduler(config, kv, queues, counters, tier, order);
  const batch: ScheduledBatch = { requests: [], tokens: [], preempted: false };
  const meanOutput = config.meanOutputTokens ?? DEFAULT_MEAN_OUTPUT_TOKENS;
  const shape = { tokens: 0, contextTokens: 0, attentionPairs: 0 };
  let lastStepStart = Number.NEGATIVE_INFINITY;

  const finishReason = (r: RequestState): FinishReason | undefined => {
    // vLLM V1 `check_stop` order: length caps first, then EOS (honouring min_tokens).
    if (r.output.length >= r.maxTokens || numTokens(r) >= config.maxModelLen) return "length";
    if (r.output.length >= r.stopLength) return "stop";
    return undefined;
  };

  const remove = (list: RequestState[], r: RequestState) => {
    const i = list.indexOf(r);
    if (i >= 0) list.splice(i, 1);
  };

  const priceAndAdvance = () => {
    shape.tokens = 0;
    shape.contextTokens = 0;
    shape.attentionPairs = 0;
    for (let i = 0; i < batch.requests.length; i++) {
      const r = batch.requests[i];
      const n = batch.tokens[i];
      const p = r.numComputed;
      shape.tokens += n;
      if (n === 1) {
        shape.contextTokens += p + 1;
      } else {
        shape.contextTokens += p;
        shape.attentionPairs += n * (p + n / 2);
      }
      if (p < r.highWater) counters.recomputedTokens += Math.min(p + n, r.highWater) - p;
      r.numComputed = p + n;
      if (r.numComputed > r.highWater) r.highWater = r.numComputed;
      tier?.storeComputed(r);
    }
  };

  const emitOutputs = (end: number): RequestOutput[] => {
    const outputs: RequestOutput[] = [];
    let iterationTokens = 0;
    let finished = 0;
    for (const r of batch.requests) {
      // Only a request that computed its last token samples; partial prefills emit nothing.
      if (r.numComputed !== numTokens(r)) continue;
      const token =
        r.forced !== null
          ? r.forced[r.output.length]
          : generatedTokenId(r.fingerprint, r.output.length);
      r.output.push(token);
      counters.generationTokens++;
      iterationTokens++;
      if (Number.isNaN(r.firstTokenTime)) {
        r.firstTokenTime = end;
        stats.firstToken(r, end);
        iterationTokens += r.prompt.length;
      } else {
        stats.nextToken(r, end);
      }
      r.lastTokenTime = end;
      const reason = finishReason(r);
      if (reason !== undefined) {
        stats.finished(r, reason, end);
        kv.free(r);
        byId.delete(r.id);
        r.finished = true;
        finished++;
      }
      const output: RequestOutput = {
        id: r.id,
        newTokenIds: [token],
        numCachedTokens: r.numCachedTokens,
        numLoadedTokens: r.numLoadedTokens,
        promptTokens: r.prompt.length,
        completionTokens: r.output.length,
      };
      if (reason !== undefined) output.finishReason = reason;
      outputs.push(output);
    }
    if (iterationTokens > 0) stats.iteration(iterationTokens);
    if (finished > 0) {
      const running = queues.running;
      let w = 0;
      for (let i = 0; i < running.length; i++) if (!running[i].finished) running[w++] = running[i];
      running.length = w;
    }
    return outputs;
  };

  return {
    config,
    add(request: EngineRequest) {
      if (byId.has(request.id)) {
        throw Errors.badRequest(`Request id '${request.id}' is already in the engine.`);
      }
      const promptLen = request.promptTokens.length;
      if (promptLen === 0) throw Errors.badRequest("The prompt is empty.", "prompt");
      if (promptLen >= config.maxModelLen) {
        throw Errors.contextLength(
          `This model's maximum context length is ${config.maxModelLen} tokens. However, your request has ${promptLen} input tokens.`,
        );
      }
      if (!(request.maxTokens >= 1)) {
        throw Errors.badRequest("max_tokens must be at least 1.", "max_tokens");
      }
      if (request.forcedOutput !== undefined && request.forcedOutput.length === 0) {
        throw Errors.badRequest("A forced output must hold at least one token.");
      }
      const key = fingerprint(config.seed, request.promptTokens);
      const r = createRequestState(
        request,
        sampleFingerprint(key, request.sampleIndex ?? 0),
        meanOutput,
      );
      byId.set(r.id, r);
      order.enqueue(queues.waiting, r, request.priority);
    },

    abort(id) {
      const r = byId.get(id);
      if (r === undefined) return false;
      byId.delete(id);
      remove(queues.waiting, r);
      remove(queues.running, r);
      tier?.drop(r);
      kv.free(r);
      return true;
    },

    step(now): StepResult | null {
      if (queues.running.length === 0 && queues.waiting.length === 0) return null;
      if (now < lastStepStart) {
        throw new RangeError(`engine clock went backwards: ${now} < ${lastStepStart}`);
      }
      lastStepStart = now;
      schedule(now, batch);
      priceAndAdvance();
      let duration = stepDuration(config.timing, shape);
      // Nothing to compute while loads are in flight: wait for the next to end, at most one
      // weight read, so a request arriving meanwhile waits no longer than behind a decode.
      const idle = shape.tokens === 0 && !batch.preempted && tier !== null && tier.numLoading > 0;
      if (idle) {
        const wait = (tier as HostTier).nextLoadDoneAt() - now;
        duration = Math.max(duration, Math.min(wait, config.timing.tWeights));
      }
      const outputs = emitOutputs(now + duration);
      if (!idle) counters.busyTime += duration;
      counters.steps++;
      return {
        startTime: now,
        duration,
        scheduledTokens: shape.tokens,
        numRunning: queues.running.length,
        outputs,
      };
    },

    hasWork: () => queues.running.length > 0 || queues.waiting.length > 0,

    stats() {
      const free = pool.numFree();
      return stats.snapshot({
        numRunning: queues.running.length,
        numWaiting: queues.waiting.length,
        kvCacheUsage: pool.usage(),
        numUsedTokens: (config.numGpuBlocks - 1 - free) * config.blockSize,
        numFreeBlocks: free,
        numCachedBlocks: pool.numCached(),
        ...(tier === null ? {} : { hostTier: tier.stats() }),
      });
    },

    resetPrefixCache: () => pool.resetPrefixCache(),

    inspect: () => ({
      running: queues.running.map(view),
      waiting: queues.waiting.map(view),
      numFreeBlocks: pool.numFree(),
      numReferencedBlocks: pool.numReferenced(),
      numCachedBlocks: pool.numCached(),
    }),
  };
}
