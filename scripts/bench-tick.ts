/**
 * Scheduler-core benchmark: cost of one `tick` with N tracked programs on 64 backends, the
 * cost of a request turn while a queue is waiting, and heap per tracked program.
 *
 * Scenario per size: every program runs one turn (ACTING, 2k–30k tokens), a quarter then has a
 * request in flight (REASONING); a tick squeezes every backend to 90 % of its use (a pause
 * storm: thousands of pauses and marks), steady ticks follow with a few thousand programs
 * queued, and a tick that restores capacity resumes them (a resume storm).
 * Targets: tick ≤ 5 ms at 10,000 programs, ≤ 50 ms at 100,000; ≤ 2 KB/program.
 *
 * Each figure is the median over `--repeats` freshly built worlds (storms) or over all steady
 * ticks; the machine is shared, so compare runs side by side.
 *
 *   node_modules/.bin/node --expose-gc scripts/bench-tick.ts [--sizes 10000,100000]
 *     [--backends 64] [--repeats 5] [--json out.json]
 */

import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { median, percentileOf } from "../src/bench/percentile.ts";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { progress, scriptArgs } from "../src/bench/script-entry.ts";
import { jsonFlag } from "../src/bench/script-flags.ts";
import { integer, listOfItems } from "../src/config/values.ts";
import type { Scheduler } from "../src/core/api.ts";
import type { Effects } from "../src/core/effects.ts";
import type { BackendMetricsSample } from "../src/core/events.ts";
import { createScheduler, DEFAULT_SCHEDULER_CONFIG } from "../src/core/scheduler.ts";
import { createRng } from "../src/workload/prng.ts";

const SPEC = {
  name: "bench:tick",
  summary:
    "The scheduler core's tick with N tracked programs (pause, steady, resume and lend storms), a request turn while a queue waits, and heap per program.",
  runtime:
    "about 2 min (timed: 130 s on a busy shared core); scales with --sizes × --repeats, the largest size most",
  flags: {
    sizes: {
      arg: "<list>",
      default: "10000,100000",
      description: "tracked programs, one world per size",
      check: listOfItems(integer(1, 10_000_000)),
    },
    backends: { arg: "<n>", default: "64", description: "backends", check: integer(1, 100_000) },
    repeats: {
      arg: "<n>",
      default: "5",
      description: "freshly built worlds per size; storms are their median",
      check: integer(1, 10_000),
    },
    "steady-ticks": {
      arg: "<n>",
      default: "50",
      description: "steady ticks per world",
      check: integer(1, 1_000_000),
    },
    json: jsonFlag("also write the figures as JSON"),
  },
  notes: [
    "Heap per program is measured only under node --expose-gc, as npm run bench:tick runs it.",
  ],
} satisfies ScriptSpec;
const { values: args } = scriptArgs(SPEC);
const SIZES = args.sizes.split(",").map(Number);
const BACKENDS = Number(args.backends);
const REPEATS = Number(args.repeats);
const STEADY_TICKS = Number(args["steady-ticks"]);
/** Program sizes: agent contexts of a few thousand to a few tens of thousands of tokens. */
const MIN_TOKENS = 2_000;
const MAX_TOKENS = 30_000;
const REASONING_SHARE = 0.25;
const SQUEEZE = 0.9;
const RELIEF = 1.2;
const HUGE_CAPACITY = 1e12;
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

interface World {
  scheduler: Scheduler;
  ids: string[];
  now: number;
  tick(capacity: (id: string) => number): number;
}

function buildWorld(programs: number, seed: number, lend = false): World {
  const ids = Array.from({ length: BACKENDS }, (_, i) => `http://backend-${i}:8000`);
  const scheduler = createScheduler({
    // The storms measure pausing and resuming: with lending on, the programs idle since the
    // world was built would lend their room at the first tick and nothing would be paused.
    // `lendStormTickMs` measures that tick instead.
    config: { ...DEFAULT_SCHEDULER_CONFIG, ...(lend ? {} : { lendAfterToolTimes: 0 }) },
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
  const rand = createRng(seed).next;
  let req = 0;
  for (let i = 0; i < programs; i++) {
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

function benchSize(programs: number, repeats = REPEATS) {
  const pauseStorm: number[] = [];
  const resumeStorm: number[] = [];
  const steady: number[] = [];
  const turnUs: number[] = [];
  let paused = 0;
  let marks = 0;
  let resumed = 0;
  const lendStorm: number[] = [];
  let lent = 0;
  for (let rep = 0; rep < repeats; rep++) {
    const w = buildWorld(programs, rep + 1);
    const used = new Map(w.scheduler.snapshot().backends.map((b) => [b.id, b.usedTokens]));
    const squeezed = (id: string) => Math.floor((used.get(id) as number) * SQUEEZE);
    pauseStorm.push(w.tick(squeezed));
    const after = w.scheduler.snapshot();
    paused = after.counters.pauses;
    marks = after.counters.marks;
    for (let i = 0; i < STEADY_TICKS; i++) steady.push(w.tick(squeezed));
    // Request turns of active programs while the queue holds thousands of paused programs:
    // every request end tries a resume (the O(queue) event-path cost).
    const active = after.programs.filter((p) => p.state === "ACTIVE" && p.inFlight === 0);
    const turns = Math.min(2_000, active.length);
    const t0 = performance.now();
    for (let i = 0; i < turns; i++) {
      const p = active[i];
      const now = ++w.now;
      const requestId = `turn-${rep}-${i}`;
      w.scheduler.handle({
        kind: "request_arrived",
        now,
        requestId,
        programId: p.id,
        messageChars: [p.totalTokens * 5],
        final: false,
      });
      w.scheduler.handle({ kind: "request_finished", now, requestId, outcome: "ok" });
    }
    turnUs.push(((performance.now() - t0) * 1000) / Math.max(1, turns));
    const before = w.scheduler.snapshot().counters.resumes;
    resumeStorm.push(w.tick((id) => Math.floor((used.get(id) as number) * RELIEF)));
    resumed = w.scheduler.snapshot().counters.resumes - before;
    const l = buildWorld(programs, rep + 1, true);
    const lentBefore = l.scheduler.snapshot().backends.reduce((a, b) => a + b.lentPrograms, 0);
    lendStorm.push(l.tick(() => HUGE_CAPACITY));
    lent = l.scheduler.snapshot().backends.reduce((a, b) => a + b.lentPrograms, 0) - lentBefore;
  }
  return {
    programs,
    backends: BACKENDS,
    pauseStormTickMs: median(pauseStorm),
    steadyTickMsMedian: median(steady),
    steadyTickMsP99: percentileOf(steady, 99),
    resumeStormTickMs: median(resumeStorm),
    turnWithQueueUs: median(turnUs),
    pausedInStorm: paused,
    markedInStorm: marks,
    resumedInStorm: resumed,
    lendStormTickMs: median(lendStorm),
    lentInStorm: lent,
  };
}

function benchMemory(programs: number) {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return null;
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  const w = buildWorld(programs, 99);
  gc();
  gc();
  const after = process.memoryUsage().heapUsed;
  const tracked = w.scheduler.snapshot().programs.length;
  return { programs: tracked, bytesPerProgram: (after - before) / tracked };
}

/** Warm-up so that the storms below measure optimised code, not the JIT's first pass. */
const WARMUP_PROGRAMS = 5_000;
progress(`warm-up: ${WARMUP_PROGRAMS} programs`);
benchSize(WARMUP_PROGRAMS, 2);
const results = SIZES.map((n, i) => {
  progress(`size ${i + 1}/${SIZES.length}: ${n} programs, ${REPEATS} worlds`);
  return benchSize(n);
});
for (const r of results) {
  console.log(
    `${r.programs} programs / ${r.backends} backends: ` +
      `pause-storm tick ${r.pauseStormTickMs.toFixed(2)} ms (${r.pausedInStorm} paused, ` +
      `${r.markedInStorm} marked), steady tick median ${r.steadyTickMsMedian.toFixed(3)} ms ` +
      `p99 ${r.steadyTickMsP99.toFixed(3)} ms, resume-storm tick ${r.resumeStormTickMs.toFixed(2)} ms ` +
      `(${r.resumedInStorm} resumed), lend-storm tick ${r.lendStormTickMs.toFixed(2)} ms (${r.lentInStorm} lent), ` +
      `request turn with queue ${r.turnWithQueueUs.toFixed(1)} µs`,
  );
}
progress("heap per program");
const memory = benchMemory(Math.max(...SIZES));
if (memory === null) console.log("memory: run with node --expose-gc to measure heap per program");
else {
  console.log(
    `memory: ${memory.bytesPerProgram.toFixed(0)} bytes per tracked program (${memory.programs} programs)`,
  );
}
if (args.json !== undefined) {
  writeFileSync(args.json, `${JSON.stringify({ results, memory }, null, 2)}\n`);
}
