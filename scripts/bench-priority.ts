/**
 * The targets for priority classes, measured in the simulator at overload: 2 ×
 * llama-3.1-8b-h100 with the profile's KV size (25,600 blocks of 16 tokens), 128 programs, 20%
 * of the slots interactive chat sessions and 80% bulk DeepSeek agents
 * (`mix:chat@interactive=0.2,deepseek@bulk=0.8`), one simulated hour (10 min warm-up, 50 min
 * window). For each seed the same workload and engines run with priorities off, then on
 * (`--priority`, the built-in class defaults). Targets, per seed:
 *   1. interactive p95 time to first token (on) ≤ 0.25 × its value with priorities off;
 *   2. total steps/min (on) ≥ 0.95 × priorities off;
 *   3. no class starves: the longest bulk wait (the core's queue waits, and requests still
 *      parked at the end) ≤ bulk's starvation threshold + one scheduler tick, and no bulk 408.
 * Prints every figure, the ratios and pass/fail per target and seed; `--json` writes the runs.
 *
 *   node_modules/.bin/node scripts/bench-priority.ts [--seeds 1,2,3] [--concurrency 128]
 *     [--workload mix:chat@interactive=0.2,deepseek@bulk=0.8] [--warmup 10m] [--duration 50m]
 *     [--classes '{"bulk":{"starvationMs":600000}}'] [--queue-policy ta] [--json out.json]
 *
 * `--classes` overrides class settings for experiments (the defaults are what ships).
 */

import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { mean } from "../src/bench/percentile.ts";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { progress, scriptArgs } from "../src/bench/script-entry.ts";
import {
  durationFlag,
  jsonFlag,
  seedsFlag,
  warmupFlag,
  workloadFlag,
} from "../src/bench/script-flags.ts";
import { ROUTER_SETTINGS } from "../src/config/router-config.ts";
import { settingOf } from "../src/config/setting.ts";
import { parsedText } from "../src/config/values.ts";
import type { PriorityConfig, SchedulerConfig } from "../src/core/api.ts";
import { resolveSimulateFlags, SIMULATE_SETTINGS } from "../src/simulate/simulate-options.ts";
import type { SimulateRunReport } from "../src/simulate/simulate-report.ts";
import { simulateSweep } from "../src/simulate/simulate-sweep.ts";
import { loadWorkload } from "../src/workload/load-workload.ts";

const SPEC = {
  name: "bench:priority",
  summary:
    "The targets for priority classes at overload, in the simulator: tr with priorities off, then on, per seed; interactive TTFT p95, total steps/min and the longest bulk wait, each pass/fail.",
  runtime:
    "not timed; 6 runs of one simulated hour (off and on per seed), one after another, a line each on stderr; scales with --seeds × (--warmup + --duration)",
  flags: {
    seeds: seedsFlag("1,2,3", "seeds, a pair of runs each"),
    concurrency: {
      arg: "<n>",
      default: "128",
      description: "program slots",
      check: SIMULATE_SETTINGS.concurrency.schema,
    },
    workload: workloadFlag({
      arg: "<mix>",
      default: "mix:chat@interactive=0.2,deepseek@bulk=0.8",
    }),
    warmup: warmupFlag({ default: "10m" }),
    duration: durationFlag({ default: "50m" }),
    classes: {
      arg: "<json>",
      defaultText: "the built-in class defaults",
      description: `class settings for experiments, e.g. '{"bulk":{"starvationMs":600000}}'`,
      check: parsedText((t) => JSON.parse(t) as unknown),
    },
    "queue-policy": {
      arg: "<policy>",
      defaultText: "maitred serve's (ta)",
      description: "order within a class with priorities on, as `maitred serve --queue-policy`",
      check: settingOf(ROUTER_SETTINGS, "queue-policy", "maitred serve").schema,
    },
    json: jsonFlag("also write the runs as JSON"),
  },
} satisfies ScriptSpec;
const { values: args } = scriptArgs(SPEC);

/** Issue 5 "Targets". */
const TTFT_RATIO_MAX = 0.25;
const THROUGHPUT_RATIO_MIN = 0.95;

interface Pair {
  seed: number;
  off: SimulateRunReport;
  on: SimulateRunReport;
  wallS: number;
}

function run(
  seed: number,
  priority: boolean,
): Promise<{ report: SimulateRunReport; wallS: number }> {
  const o = resolveSimulateFlags({
    router: "tr",
    workload: args.workload,
    concurrency: args.concurrency,
    warmup: args.warmup,
    duration: args.duration,
    seed: String(seed),
    ...(priority ? { priority: true } : {}),
    ...(priority && args["queue-policy"] ? { queuePolicy: args["queue-policy"] } : {}),
  });
  const knobs: Omit<SchedulerConfig, "mode"> = { ...o.knobs };
  if (priority && args.classes !== undefined) {
    const classes = JSON.parse(args.classes) as PriorityConfig["classes"];
    knobs.priority = { ...knobs.priority, classes };
  }
  return loadWorkload(o.workload).then((workload) => {
    const t0 = performance.now();
    const [report] = simulateSweep({ ...o, knobs, concurrency: [o.concurrency[0]] }, workload);
    return { report, wallS: (performance.now() - t0) / 1000 };
  });
}

const f = (v: number | null | undefined, d = 1) => (v == null ? "-" : v.toFixed(d));
const pass = (ok: boolean) => (ok ? "PASS" : "FAIL");

/** The longest bulk wait the run saw: dispatched after parking, or still parked at the end. */
function longestWait(r: SimulateRunReport, cls: "bulk" | "interactive"): number {
  const core = r.priority?.classes[cls];
  const steps = r.classes[cls]?.queue_wait_ms.max ?? 0;
  return Math.max(steps, core?.queue_wait_ms.max ?? 0, core?.still_waiting_max_ms ?? 0);
}

function describe(label: string, r: SimulateRunReport): string {
  const i = r.classes.interactive;
  const b = r.classes.bulk;
  const pr = r.priority?.classes;
  const engine = r.backends.reduce((a, x) => a + x.preemptions, 0);
  return [
    `  ${label}: ${f(r.steps_per_min)} steps/min (interactive ${f(i?.steps_per_min)}, bulk ${f(b?.steps_per_min)})`,
    `    interactive TTFT p50/p95/p99 ${f(i?.ttft_ms.p50, 0)}/${f(i?.ttft_ms.p95, 0)}/${f(i?.ttft_ms.p99, 0)} ms, step p95 ${f(i?.step_latency_ms.p95, 0)} ms, longest wait ${f(longestWait(r, "interactive") / 1000)} s, errors ${JSON.stringify(i?.errors ?? {})}`,
    `    bulk TTFT p50/p95/p99 ${f(b?.ttft_ms.p50, 0)}/${f(b?.ttft_ms.p95, 0)}/${f(b?.ttft_ms.p99, 0)} ms, step p95 ${f(b?.step_latency_ms.p95, 0)} ms, longest wait ${f(longestWait(r, "bulk") / 1000)} s, errors ${JSON.stringify(b?.errors ?? {})}`,
    `    core: pauses ${r.scheduler.pauses}, marks ${r.scheduler.marks}, resumes ${r.scheduler.resumes}, forced ${r.scheduler.forcedResumes}; engine preemptions ${engine}; cache hit ${f((r.prompt_tokens.cache_hit_rate ?? 0) * 100)}%` +
      (pr === undefined
        ? ""
        : `; preemption victims bulk ${pr.bulk.preemptions}, promotions interactive ${pr.interactive.promotions} bulk ${pr.bulk.promotions}, 408 interactive ${pr.interactive.admissions.queue_timeout} bulk ${pr.bulk.admissions.queue_timeout}`),
  ].join("\n");
}

const seeds = args.seeds.split(",").map(Number);
const pairs: Pair[] = [];
let allPass = true;
for (const [i, seed] of seeds.entries()) {
  progress(`run ${2 * i + 1}/${2 * seeds.length}: seed ${seed}, priorities off`);
  const off = await run(seed, false);
  progress(`run ${2 * i + 2}/${2 * seeds.length}: seed ${seed}, priorities on`);
  const on = await run(seed, true);
  const pair = { seed, off: off.report, on: on.report, wallS: off.wallS + on.wallS };
  pairs.push(pair);
  const ttftOff = off.report.classes.interactive?.ttft_ms.p95 ?? null;
  const ttftOn = on.report.classes.interactive?.ttft_ms.p95 ?? null;
  const ttftRatio = ttftOff && ttftOn !== null ? ttftOn / ttftOff : null;
  const tputRatio = on.report.steps_per_min / off.report.steps_per_min;
  const bulk = on.report.priority?.classes.bulk;
  const bound = (bulk?.settings.starvation_ms ?? 0) + on.report.simulated.scheduler_interval_ms;
  const bulkWait = longestWait(on.report, "bulk");
  const bulk408 = bulk?.admissions.queue_timeout ?? 0;
  const t1 = ttftRatio !== null && ttftRatio <= TTFT_RATIO_MAX;
  const t2 = tputRatio >= THROUGHPUT_RATIO_MIN;
  const t3 = bulk !== undefined && bulkWait <= bound && bulk408 === 0;
  allPass &&= t1 && t2 && t3;
  process.stdout.write(
    [
      `seed ${seed} (${pair.wallS.toFixed(1)} s wall)`,
      describe("priorities off", off.report),
      describe("priorities on ", on.report),
      `  target 1 interactive TTFT p95: ${f(ttftOn, 0)} / ${f(ttftOff, 0)} ms = ${f(ttftRatio, 3)} (≤ ${TTFT_RATIO_MAX}) ${pass(t1)}`,
      `  target 2 steps/min: ${f(on.report.steps_per_min)} / ${f(off.report.steps_per_min)} = ${f(tputRatio, 3)} (≥ ${THROUGHPUT_RATIO_MIN}) ${pass(t2)}`,
      `  target 3 longest bulk wait: ${f(bulkWait / 1000)} s (≤ ${f(bound / 1000)} s), bulk 408s ${bulk408} ${pass(t3)}`,
      "",
    ].join("\n"),
  );
}
process.stdout.write(
  `mean over seeds ${seeds.join(",")}: TTFT ratio ${f(
    mean(
      pairs.map(
        (p) =>
          (p.on.classes.interactive?.ttft_ms.p95 ?? 0) /
          (p.off.classes.interactive?.ttft_ms.p95 ?? 1),
      ),
    ),
    3,
  )}, steps/min ratio ${f(mean(pairs.map((p) => p.on.steps_per_min / p.off.steps_per_min)), 3)}; all targets ${pass(allPass)}\n`,
);
if (args.json) {
  const runs = pairs.flatMap((p) => [
    { seed: p.seed, priority: false, report: { ...p.off, series: undefined } },
    { seed: p.seed, priority: true, report: { ...p.on, series: undefined } },
  ]);
  writeFileSync(args.json, `${JSON.stringify({ runs }, null, 2)}\n`);
}
