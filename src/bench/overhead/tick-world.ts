/**
 * The world `bench:tick` measures the scheduler core in: N tracked programs on a number of
 * backends, each program after one turn (ACTING, 2k–30k tokens), a quarter of them with a
 * request in flight (REASONING), and a `tick` that hands the core every backend's capacity.
 */
import { performance } from "node:perf_hooks";
import type { Scheduler } from "../../core/api.ts";
import type { Effects } from "../../core/effects.ts";
import type { BackendMetricsSample } from "../../core/events.ts";
import { createScheduler, DEFAULT_SCHEDULER_CONFIG } from "../../core/scheduler.ts";
import { createRng } from "../../workload/prng.ts";

/** Program sizes: agent contexts of a few thousand to a few tens of thousands of tokens. */
const MIN_TOKENS = 2_000;
const MAX_TOKENS = 30_000;
/** The share of programs with a request in flight when the world is built. */
const REASONING_SHARE = 0.25;
/** Capacity no world fills: the first tick places every program. */
export const HUGE_CAPACITY = 1e12;
/** Between two ticks, as the router's default scheduler interval is. */
const TICK_MS = 5_000;

const noop = () => {};
const effects: Effects = { dispatch: noop, reject: noop, cancel: noop, log: noop };

function sample(capacityTokens: number): BackendMetricsSample {
  return {
    capacityTokens,
    // Gauges unknown: no prefix-sharing credit and no engine room, the books as counted.
    kvUsage: null,
    running: null,
    waiting: null,
    preemptionsTotal: 0,
    prefixCacheQueriesTotal: 0,
    prefixCacheHitsTotal: 0,
    promptTokensTotal: 0,
    generationTokensTotal: 0,
  };
}

export interface World {
  scheduler: Scheduler;
  ids: string[];
  /** The world's clock (ms); each event and tick moves it on. */
  now: number;
  /** One tick with each backend's capacity; the ms the core took to handle it. */
  tick(capacity: (id: string) => number): number;
}

export interface WorldOptions {
  programs: number;
  backends: number;
  /** Seeds the programs' sizes and which of them are reasoning. */
  seed: number;
  /** Lending on (the core's default) or off (the pause and resume storms). */
  lend?: boolean;
}

export function buildWorld(o: WorldOptions): World {
  const ids = Array.from({ length: o.backends }, (_, i) => `http://backend-${i}:8000`);
  const scheduler = createScheduler({
    // The storms measure pausing and resuming: with lending on, the programs idle since the
    // world was built would lend their room at the first tick and nothing would be paused.
    // `lendStormTickMs` measures that tick instead.
    config: { ...DEFAULT_SCHEDULER_CONFIG, ...(o.lend ? {} : { lendAfterToolTimes: 0 }) },
    backends: ids.map((id) => ({ id, type: "vllm" as const })),
    effects,
  });
  const world: World = {
    scheduler,
    ids,
    now: 1_000,
    tick(capacity) {
      const metrics: Record<string, BackendMetricsSample> = {};
      for (const id of ids) metrics[id] = sample(capacity(id));
      world.now += TICK_MS;
      const t0 = performance.now();
      scheduler.handle({ kind: "tick", now: world.now, metrics });
      return performance.now() - t0;
    },
  };
  world.tick(() => HUGE_CAPACITY);
  const rand = createRng(o.seed).next;
  let req = 0;
  for (let i = 0; i < o.programs; i++) {
    const tokens = Math.floor(MIN_TOKENS + rand() * (MAX_TOKENS - MIN_TOKENS));
    const now = ++world.now;
    const requestId = `r${++req}`;
    const programId = `program-${i}`;
    scheduler.handle({
      kind: "request_arrived",
      now,
      requestId,
      programId,
      messageChars: [tokens * 5],
      final: false,
    });
    scheduler.handle({
      kind: "request_usage",
      now,
      requestId,
      usage: { promptTokens: tokens, completionTokens: 0, totalTokens: tokens },
    });
    scheduler.handle({ kind: "request_finished", now, requestId, outcome: "ok" });
    if (rand() < REASONING_SHARE) {
      scheduler.handle({
        kind: "request_arrived",
        now,
        requestId: `r${++req}`,
        programId,
        messageChars: [tokens * 5, 500],
        final: false,
      });
    }
  }
  return world;
}
