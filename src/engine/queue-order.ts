/**
 * The order of the waiting queue and the choice of preemption victims, the part of the
 * scheduler (scheduler.ts) that priority scheduling changes. Three orders, each as the engine
 * it imitates schedules:
 *
 * - **First come, first served** (vLLM's default `--scheduling-policy fcfs`; the engine under
 *   either personality without priority scheduling). Arrivals join the tail; a preempted request
 *   goes back to the head; when a running request cannot get its blocks the last running request
 *   (the most recently admitted) is preempted. The `priority` field is ignored.
 * - **vLLM** (`--scheduling-policy priority`, vLLM V1's priority queue). Waiting requests
 *   go by (priority, arrival), lower first; ties in the order the engine took them. The victim is
 *   the running request with the largest (priority, arrival), the first in running order on a
 *   tie, even one already scheduled earlier in the step, which then leaves the
 *   step. A preempted request keeps its key: it goes back by key, not to the head, so an
 *   equal-priority request that arrived before it and has not started passes it. A waiting
 *   request never preempts (it waits for room), and a step that preempted admits nobody. Its KV
 *   comes back as first come, first served brings it back: blocks still in the GPU prefix cache
 *   are hits, blocks the host tier still holds are loaded, the rest is recomputed.
 * - **SGLang** (`--enable-priority-scheduling`, here `--scheduling-policy priority` with the
 *   SGLang personality). Waiting requests go by (priority, when they entered the queue), higher
 *   values first unless `--schedule-low-priority-values-first`; a request without a priority is
 *   the lowest there is (SGLang gives it the largest integer of the losing sign). A waiting
 *   request that does not fit may preempt the running requests whose priority is worse than its
 *   own by more than `--priority-scheduling-preemption-threshold`, worst first (among equals the
 *   latest to enter the queue), if together they free enough blocks (blocks that are the waiting request's own
 *   prefix hits free no room for it). A
 *   preempted request enters the queue again at that moment, behind the waiting requests of its
 *   priority, and its KV outside the prefix cache (SGLang's radix tree, the GPU cache here) is
 *   recomputed: the host tier is not asked for it. When a running request's KV runs out, the
 *   victim is the most recently admitted, as first come, first served has it: SGLang's default
 *   retraction (`--retraction-policy length`) does not look at priorities.
 */

import type { RequestState } from "./request-state.ts";
import type { PriorityRules, PriorityScheduling } from "./types.ts";

/** SGLang's `--priority-scheduling-preemption-threshold` default. */
export const DEFAULT_PREEMPTION_THRESHOLD = 10;

export interface QueueOrder {
  /** A request the engine took in joins the waiting queue; `priority` is its request field. */
  enqueue(waiting: RequestState[], r: RequestState, priority: number | undefined): void;
  /** A request preempted at `now` goes back into the waiting queue. */
  requeue(waiting: RequestState[], r: RequestState, now: number): void;
  /** Index in `running` of the request to preempt when a running request lacks blocks. */
  victim(running: readonly RequestState[]): number;
  /** A preempted request's blocks are looked up in the host tier when it comes back. */
  readonly reloadsPreempted: boolean;
  /**
   * The running requests waiting request `r` may preempt, worst first, that free at least `need`
   * blocks (at least one request, as a full batch needs a seat); `freed(v)` is what preempting
   * `v` frees. Empty when they are not enough. Null under rules where a waiting request never
   * preempts.
   */
  readonly victimsFor:
    | ((
        r: RequestState,
        running: readonly RequestState[],
        need: number,
        freed: (v: RequestState) => number,
      ) => RequestState[])
    | null;
}

const FCFS: QueueOrder = {
  enqueue: (waiting, r) => {
    waiting.push(r);
  },
  requeue: (waiting, r) => {
    waiting.unshift(r);
  },
  victim: (running) => running.length - 1,
  reloadsPreempted: true,
  victimsFor: null,
};

/** `a` is served before `b`: lower rank, then the earlier queue entry, then taken in first. */
export function servedBefore(a: RequestState, b: RequestState): boolean {
  if (a.rank !== b.rank) return a.rank < b.rank;
  if (a.queuedAt !== b.queuedAt) return a.queuedAt < b.queuedAt;
  return a.seq < b.seq;
}

/** Insert `r` into `waiting`, kept in served order, after every request served before it. */
function insertByKey(waiting: RequestState[], r: RequestState): void {
  let lo = 0;
  let hi = waiting.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (servedBefore(r, waiting[mid])) hi = mid;
    else lo = mid + 1;
  }
  waiting.splice(lo, 0, r);
}

/** SGLang's candidates order: the worst priority first, then the latest to enter the queue. */
const worstFirst = (a: RequestState, b: RequestState) =>
  a.rank !== b.rank ? (a.rank > b.rank ? -1 : 1) : b.queuedAt - a.queuedAt;

function priorityOrder(p: PriorityScheduling): QueueOrder {
  const sglang = p.rules === "sglang";
  const threshold = p.preemptionThreshold ?? DEFAULT_PREEMPTION_THRESHOLD;
  // One number per request, lower served first, so both polarities share one comparison.
  const rankOf = (priority: number | undefined): number => {
    if (!sglang) return priority ?? 0;
    if (priority === undefined) return Number.POSITIVE_INFINITY;
    return p.lowValuesFirst === true ? priority : -priority;
  };
  let seq = 0;
  return {
    enqueue(waiting, r, priority) {
      r.rank = rankOf(priority);
      r.seq = seq++;
      insertByKey(waiting, r);
    },
    requeue(waiting, r, now) {
      if (sglang) {
        r.queuedAt = now;
        r.seq = seq++;
      }
      insertByKey(waiting, r);
    },
    victim(running) {
      if (sglang) return running.length - 1;
      let v = 0;
      for (let i = 1; i < running.length; i++) {
        const a = running[i];
        const b = running[v];
        if (a.rank > b.rank || (a.rank === b.rank && a.arrivalTime > b.arrivalTime)) v = i;
      }
      return v;
    },
    reloadsPreempted: !sglang,
    victimsFor: sglang
      ? (r, running, need, freed) => {
          // Most steps have no candidate at all (equal priorities): skip the sort then.
          let worst = Number.NEGATIVE_INFINITY;
          for (const v of running) if (v.rank > worst) worst = v.rank;
          if (!(worst - r.rank > threshold)) return [];
          const taken: RequestState[] = [];
          let missing = need;
          for (const v of running.slice().sort(worstFirst)) {
            // A difference of two lowest priorities (∞ − ∞) is no difference.
            if (!(v.rank - r.rank > threshold)) break;
            taken.push(v);
            missing -= freed(v);
            if (missing <= 0) return taken;
          }
          return [];
        }
      : null,
  };
}

export function createQueueOrder(p: PriorityScheduling | undefined): QueueOrder {
  return p === undefined ? FCFS : priorityOrder(p);
}

/** The scheduling settings of `maitred sim-backend` and `maitred simulate`, by flag. */
export interface SchedulingFlags {
  /** `--scheduling-policy`. */
  schedulingPolicy: "fcfs" | "priority";
  /** `--personality`: whose rules a priority engine follows. */
  personality: PriorityRules;
  /** `--schedule-low-priority-values-first` (SGLang). */
  scheduleLowPriorityValuesFirst: boolean;
  /** `--priority-scheduling-preemption-threshold` (SGLang). */
  prioritySchedulingPreemptionThreshold: number;
}

/** The engine's setting for those flags: none for fcfs; SGLang's knobs only for SGLang. */
export function prioritySchedulingOf(f: SchedulingFlags): PriorityScheduling | undefined {
  if (f.schedulingPolicy === "fcfs") return undefined;
  if (f.personality === "vllm") return { rules: "vllm" };
  return {
    rules: "sglang",
    lowValuesFirst: f.scheduleLowPriorityValuesFirst,
    preemptionThreshold: f.prioritySchedulingPreemptionThreshold,
  };
}

/** Which `priority` values an engine with these settings serves first. */
export function priorityPolarity(p: PriorityScheduling): "lower-first" | "higher-first" {
  return p.rules === "vllm" || p.lowValuesFirst === true ? "lower-first" : "higher-first";
}
