/**
 * Batch formation for one step, vLLM V1 `Scheduler.schedule` (vllm-project/vllm
 * `vllm/v1/core/sched/scheduler.py`). Numbered steps:
 *
 *   1. RUNNING requests in list order, each taking min(remaining, budget) tokens (decodes take
 *      1, an unfinished prompt takes its next chunk). When a request cannot get its blocks a
 *      victim is preempted (queue-order.ts picks it: the LAST running request, the most recently
 *      admitted, first come first served): blocks freed (hashes kept), computed tokens reset to
 *      0, back into the waiting queue. A victim already scheduled in this step leaves it and its
 *      tokens return to the budget. If the victim is the request itself, scheduling of running
 *      requests stops.
 *   2. WAITING requests, only if step 1 preempted nobody, while running < max_num_seqs and
 *      budget remains, in the waiting queue's order: prefix lookup, then min(rest of prompt,
 *      budget) tokens (chunked prefill). The first request that does not fit ends admission
 *      (head-of-line blocking), unless under SGLang's priority rules it may preempt running
 *      requests of a priority worse enough to make room (queue-order.ts). With a host tier
 *      (host-tier.ts), a request whose prefix continues in host memory gets its blocks and starts
 *      a load instead, and is passed over until the load has ended.
 *
 * Prefix-cache query/hit counters move at first admission only (preempted requests'
 * lookups are not exported); the host tier's lookups count at every admission from nothing
 * computed, as vLLM counts its connector's.
 */

import type { StatsCounters } from "./engine-stats.ts";
import type { HostTier } from "./host-tier.ts";
import type { KvCacheManager } from "./kv-cache-manager.ts";
import type { QueueOrder } from "./queue-order.ts";
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
  order: QueueOrder,
) {
  const hitScratch: number[] = [];
  const blockSize = config.blockSize;
  const { running, waiting } = queues;
  const victimsFor = order.victimsFor;

  /** Prefix-cache counters at an allocation from nothing computed (GPU ones: first only). */
  const admitted = (
    r: RequestState,
    host: HostTier | null,
    hitTokens: number,
    loadedTokens: number,
  ) => {
    host?.recordLookup(numTokens(r) - hitTokens, loadedTokens);
    if (r.numCachedTokens >= 0) return;
    r.numCachedTokens = hitTokens + loadedTokens;
    r.numLoadedTokens = loadedTokens;
    counters.prefixCacheQueries += numTokens(r);
    counters.prefixCacheHits += hitTokens;
    counters.hostLoadedTokens += loadedTokens;
  };

  /** Take `victim` out of this step's batch, if it is in it: its tokens are returned. */
  const unschedule = (batch: ScheduledBatch, victim: RequestState): number => {
    const j = batch.requests.indexOf(victim);
    if (j < 0) return 0;
    const n = batch.tokens[j];
    batch.requests.splice(j, 1);
    batch.tokens.splice(j, 1);
    return n;
  };

  const preempt = (victim: RequestState, now: number) => {
    kv.free(victim);
    victim.numComputed = 0;
    victim.hostTouched = false;
    victim.numPreemptions++;
    counters.numPreemptions++;
    order.requeue(waiting, victim, now);
  };

  /**
   * SGLang's preemption for waiting request `r`, `need` blocks short: the victims found leave
   * the running list (and this step, their tokens back in the budget) in running order.
   * Returns the budget given back, or −1 when there were not victims enough.
   */
  const preemptFor = (
    batch: ScheduledBatch,
    r: RequestState,
    need: number,
    hits: readonly number[],
    numHits: number,
    now: number,
  ) => {
    // A victim's blocks that are `r`'s prefix hits give it no room: they stay its hits.
    const hit = numHits > 0 ? new Set(hits.slice(0, numHits)) : undefined;
    const freed = (v: RequestState) => kv.numOwnBlocks(v, hit);
    const victims = victimsFor === null ? [] : victimsFor(r, running, need, freed);
    if (victims.length === 0) return -1;
    let returned = 0;
    for (let i = 0; i < running.length; ) {
      const v = running[i];
      if (!victims.includes(v)) {
        i++;
        continue;
      }
      running.splice(i, 1);
      returned += unschedule(batch, v);
      preempt(v, now);
    }
    batch.preempted = true;
    return returned;
  };

  return function schedule(now: number, batch: ScheduledBatch): void {
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
        const v = order.victim(running);
        const victim = running[v];
        running.splice(v, 1);
        // A victim before `r` was looked at already (and maybe scheduled) in this step.
        if (v < i) {
          i--;
          budget += unschedule(batch, victim);
        }
        preempt(victim, now);
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
    // The request admission already preempted for: one try each, as SGLang's prefill adder.
    let preemptedFor: RequestState | null = null;
    while (i < waiting.length && budget > 0) {
      const full = running.length >= config.maxNumSeqs;
      if (full && victimsFor === null) break;
      const r = waiting[i];
      // A request waiting for its load is passed over; it blocks no one behind it.
      if (r.loadDoneAt > now) {
        i++;
        continue;
      }
      const host =
        tier !== null && (order.reloadsPreempted || r.numPreemptions === 0) ? tier : null;
      let hitBlocks = 0;
      let hits: readonly number[] = NO_HITS;
      let hostBlocks = 0;
      let maxBlocks = 0;
      if (r.numComputed === 0) {
        hitBlocks = kv.findCachedBlocks(r, hitScratch);
        hits = hitScratch;
        maxBlocks = Math.floor((numTokens(r) - 1) / blockSize);
        if (host !== null) hostBlocks = host.match(r, hitBlocks, maxBlocks);
      }
      const hitTokens = hitBlocks * blockSize;
      const loaded = hostBlocks * blockSize;
      // With a host hit: room for the hit and the load now, the rest once the load has ended.
      const n =
        hostBlocks > 0 ? loaded : Math.min(numTokens(r) - r.numComputed - hitTokens, budget);
      const fits = !full && kv.allocateSlots(r, n, hits, hitBlocks, hostBlocks === 0);
      if (host !== null && hits !== NO_HITS && (fits || !r.hostTouched)) {
        host.touch(r, maxBlocks);
        r.hostTouched = true;
      }
      if (!fits) {
        if (victimsFor === null || preemptedFor === r) break;
        const returned = preemptFor(
          batch,
          r,
          kv.shortfall(r, n, hits, hitBlocks),
          hits,
          hitBlocks,
          now,
        );
        if (returned < 0) break;
        budget += returned;
        preemptedFor = r;
        continue;
      }
      if (hits !== NO_HITS) {
        admitted(r, host, hitTokens, loaded);
        r.numStored = hitBlocks + hostBlocks;
      }
      if (hostBlocks > 0) {
        r.numComputed = hitTokens + loaded;
        host?.startLoad(r, hitBlocks, hostBlocks, now);
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
