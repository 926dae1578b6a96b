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
 *      With a host tier (host-tier.ts), a request whose prefix continues in host memory gets
 *      its blocks and starts a load instead, and is passed over until the load has ended.
 *
 * Prefix-cache query/hit counters move at first admission only (preempted requests'
 * lookups are not exported); the host tier's lookups count at every admission from nothing
 * computed, as vLLM counts its connector's.
 */

import type { StatsCounters } from "./engine-stats.ts";
import type { HostTier } from "./host-tier.ts";
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
  tier: HostTier | null,
) {
  const hitScratch: number[] = [];
  const blockSize = config.blockSize;

  /** Prefix-cache counters at an allocation from nothing computed (GPU ones: first only). */
  const admitted = (r: RequestState, hitTokens: number, loadedTokens: number) => {
    tier?.recordLookup(numTokens(r) - hitTokens, loadedTokens);
    if (r.numCachedTokens >= 0) return;
    r.numCachedTokens = hitTokens + loadedTokens;
    r.numLoadedTokens = loadedTokens;
    counters.prefixCacheQueries += numTokens(r);
    counters.prefixCacheHits += hitTokens;
    counters.hostLoadedTokens += loadedTokens;
  };

  const preempt = (victim: RequestState) => {
    kv.free(victim);
    victim.numComputed = 0;
    victim.hostTouched = false;
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
    tier?.endLoads(now);
    if (batch.preempted) return;
    let i = 0;
    while (i < waiting.length && budget > 0 && running.length < config.maxNumSeqs) {
      const r = waiting[i];
      // A request waiting for its load is passed over; it blocks no one behind it.
      if (r.loadDoneAt > now) {
        i++;
        continue;
      }
      let hitBlocks = 0;
      let hits: readonly number[] = NO_HITS;
      let hostBlocks = 0;
      let maxBlocks = 0;
      if (r.numComputed === 0) {
        hitBlocks = kv.findCachedBlocks(r, hitScratch);
        hits = hitScratch;
        maxBlocks = Math.floor((numTokens(r) - 1) / blockSize);
        if (tier !== null) hostBlocks = tier.match(r, hitBlocks, maxBlocks);
      }
      const hitTokens = hitBlocks * blockSize;
      const loaded = hostBlocks * blockSize;
      // With a host hit: room for the hit and the load now, the rest once the load has ended.
      const n =
        hostBlocks > 0 ? loaded : Math.min(numTokens(r) - r.numComputed - hitTokens, budget);
      const fits = kv.allocateSlots(r, n, hits, hitBlocks, hostBlocks === 0);
      if (tier !== null && hits !== NO_HITS && (fits || !r.hostTouched)) {
        tier.touch(r, maxBlocks);
        r.hostTouched = true;
      }
      if (!fits) break;
      if (hits !== NO_HITS) {
        admitted(r, hitTokens, loaded);
        r.numStored = hitBlocks + hostBlocks;
      }
      if (hostBlocks > 0) {
        r.numComputed = hitTokens + loaded;
        tier?.startLoad(r, hitBlocks, hostBlocks, now);
        i++;
        continue;
      }
      if (Number.isNaN(r.firstScheduledTime)) r.firstScheduledTime = now;
      waiting.splice(i, 1);
      running.push(r);
      batch.requests.push(r);
      batch.tokens.push(n);
      budget -= n;
    }
  };
}
