/**
 * Batch formation for one step, vLLM V1 `Scheduler.schedule` (vllm-project/vllm
 * `vllm/v1/core/sched/scheduler.py`). Numbered steps:
 *
 *   1. RUNNING requests in list order, each taking min(remaining, budget) tokens (decodes take
 *      1, an unfinished prompt takes its next chunk). When a request cannot get its blocks the
 *      LAST running request (most recently admitted) is preempted: blocks freed (hashes kept),
 *      computed tokens reset to 0, pushed to the FRONT of waiting. If the victim is the request
 *      itself, scheduling of running requests stops.
 *   2. WAITING requests, only if step 1 preempted nobody, while running < max_num_seqs and
 *      budget remains: prefix lookup, then min(rest of prompt, budget) tokens (chunked
 *      prefill). The first request that does not fit ends admission (head-of-line blocking).
 *
 * Prefix-cache query/hit counters move at first admission only (preempted requests'
 * lookups are not exported).
 */

import type { StatsCounters } from "./engine-stats.ts";
import type { KvCacheManager } from "./kv-cache-manager.ts";
import { numTokens, type RequestState } from "./request-state.ts";
import type { EngineConfig } from "./types.ts";

/** The step's plan: parallel arrays, reused across steps so planning allocates nothing. */
export interface ScheduledBatch {
  requests: RequestState[];
  tokens: number[];
  preempted: boolean;
}

export interface SchedulerQueues {
  running: RequestState[];
  waiting: RequestState[];
}

const NO_HITS: readonly number[] = [];

export function createScheduler(
  config: EngineConfig,
  kv: KvCacheManager,
  queues: SchedulerQueues,
  counters: StatsCounters,
) {
  const hitScratch: number[] = [];
  const blockSize = config.blockSize;

  const preempt = (victim: RequestState) => {
    kv.free(victim);
    victim.numComputed = 0;
    victim.numPreemptions++;
    counters.numPreemptions++;
    queues.waiting.unshift(victim);
  };

  return function schedule(now: number, batch: ScheduledBatch): void {
    const { running, waiting } = queues;
    batch.requests.length = 0;
    batch.tokens.length = 0;
    batch.preempted = false;
    let budget = config.maxNumBatchedTokens;

    // Case 1: running requests.
    for (let i = 0; i < running.length && budget > 0; i++) {
      const r = running[i];
      const n = Math.min(
        numTokens(r) - r.numComputed,
        budget,
        config.maxModelLen - 1 - r.numComputed,
      );
      if (n <= 0) continue;
      let scheduled = false;
      for (;;) {
        if (kv.allocateSlots(r, n, NO_HITS, 0)) {
          scheduled = true;
          break;
        }
        const victim = running.pop()!;
        preempt(victim);
        batch.preempted = true;
        if (victim === r) break;
      }
      if (!scheduled) break;
      batch.requests.push(r);
      batch.tokens.push(n);
      budget -= n;
    }

    // Case 2: admissions, never in a step that preempted.
    if (batch.preempted) return;
    while (waiting.length > 0 && budget > 0 && running.length < config.maxNumSeqs) {
      const r = waiting[0];
      const hitBlocks = kv.findCachedBlocks(r, hitScratch);
      const hitTokens = hitBlocks * blockSize;
      const n = Math.min(numTokens(r) - hitTokens, budget);
      if (!kv.allocateSlots(r, n, hitScratch, hitBlocks)) break;
      waiting.shift();
      running.push(r);
      if (r.numCachedTokens < 0) {
        r.numCachedTokens = hitTokens;
        r.firstScheduledTime = now;
        counters.prefixCacheQueries += numTokens(r);
        counters.prefixCacheHits += hitTokens;
      }
      batch.requests.push(r);
      batch.tokens.push(n);
      budget -= n;
    }
  };
}
