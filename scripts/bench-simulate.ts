/**
 * Benchmark of `maitred simulate` on its target configuration: the mini-swe-agent DeepSeek
 * trace on 2 × llama-3.1-8b-h100 engines with the profile's KV size (25,600 blocks of 16
 * tokens), one simulated hour (10 min warm-up + 50 min steady window, as ThunderAgent counts).
 *
 * Targets: at 128 programs tr ≥ 1.5× default and tr ≥ 0.8× oracle in steps/min; at 16
 * programs (no KV pressure) tr ≥ 0.98× default; one simulated hour of 128 programs in ≤ 60 s
 * of wall time. Prints wall time, simulated seconds per wall second, steps/min and ratios.
 *
 * `--sweep` also runs tr at 128 programs over placement × acting-token decay × scheduler
 * interval for every `--seeds` value and prints a markdown evidence table (means over seeds).
 * More tr variants, each a comma list: `--headroom-steps 0,1,2,4,8` (0 = ThunderAgent's flat
 * buffer), `--ageing 0,300,900` (seconds; 0 = off), `--buffers 500,2000` (buffer-per-program
 * with the flat buffer); `--no-credit` adds a run where the core gets no prefix-sharing
 * credit. Besides throughput the table shows the starvation figures: forced resumes (parked
 * 1800 s), step latency p99 and max, and the share of paused steps that waited over 10 min.
 *
 *   node_modules/.bin/node scripts/bench-simulate.ts [--seeds 1] [--sweep] [--headroom-steps 0,4]
 *     [--ageing 0,900] [--buffers 100,2000] [--no-credit] [--warmup 10m] [--duration 50m]
 *     [--json out.json]
 */

import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { markdownTable } from "../src/bench/markdown-table.ts";
import { mean } from "../src/bench/percentile.ts";
import type { RunRecords } from "../src/bench/records.ts";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { scriptArgs } from "../src/bench/script-entry.ts";
import { durationFlag, jsonFlag, seedsFlag, warmupFlag } from "../src/bench/script-flags.ts";
import { listOfItems, nonNegative } from "../src/config/values.ts";
import type { Placement } from "../src/core/api.ts";
import {
  runSimulation,
  type SimRouter,
  type SimRunOptions,
} from "../src/simulate/run-simulation.ts";
import { resolveSimulateFlags, type SimulateOptions } from "../src/simulate/simulate-options.ts";
import type { SimulateRunReport } from "../src/simulate/simulate-report.ts";
import { loadWorkload } from "../src/workload/load-workload.ts";
import type { Workload } from "../src/workload/types.ts";

const numbers = listOfItems(nonNegative());
const SPEC = {
  name: "bench:simulate",
  summary:
    "`maitred simulate` on its target: DeepSeek trace on 2 × llama-3.1-8b-h100; tr against default and the oracle at 128 and 16 programs, and its wall time per simulated hour.",
  runtime:
    "about 1 min: 5 runs of one simulated hour per seed (recorded: 6–17 s of wall time per simulated hour of tr); --sweep adds 12 runs per seed, each variant list one run per value and seed",
  flags: {
    seeds: seedsFlag("1", "seeds; every run once per seed, figures are means"),
    sweep: {
      type: "boolean",
      description: "also tr over placement × acting-token decay × scheduler interval",
    },
    buffers: {
      arg: "<list>",
      description: "tr variants with the flat buffer-per-program of each value",
      check: numbers,
    },
    "headroom-steps": {
      arg: "<list>",
      description: "tr variants with each growth-headroom-steps value (0 = flat buffer)",
      check: numbers,
    },
    ageing: {
      arg: "<list>",
      description: "tr variants with each ageing bound, seconds (0 = off)",
      check: numbers,
    },
    warmup: warmupFlag({ default: "10m" }),
    duration: durationFlag({ default: "50m" }),
    "no-credit": {
      type: "boolean",
      description: "add a tr run whose core gets no prefix-sharing credit",
    },
    json: jsonFlag(),
  },
} satisfies ScriptSpec;
const { values: args } = scriptArgs(SPEC);
const numberList = (raw: string | undefined) =>
  (raw ?? "")
    .split(",")
    .filter((x) => x !== "")
    .map(Number);
const buffers = numberList(args.buffers);
const headroomSteps = numberList(args["headroom-steps"]);
const ageingS = numberList(args.ageing);

const seeds = args.seeds.split(",").map(Number);
const base = resolveSimulateFlags({
  workload: "deepseek",
  profile: "llama-3.1-8b-h100",
  numBackends: "2",
  warmup: args.warmup,
  duration: args.duration,
});
const simS = (base.warmupMs + base.durationMs) / 1000;

interface Measured {
  label: string;
  seed: number;
  wallS: number;
  report: SimulateRunReport;
  waits: Waits;
}

/** Parked time of the steps that ended in the steady window (the report's own window). */
interface Waits {
  pausedSteps: number;
  over10Min: number;
  over20Min: number;
}

const TEN_MIN_MS = 600_000;

function waitsOf(records: RunRecords): Waits {
  const end = base.warmupMs + base.durationMs;
  const paused = records.steps.filter(
    (s) => s.endMs >= base.warmupMs && s.endMs < end && s.pausedMs > 0,
  );
  return {
    pausedSteps: paused.length,
    over10Min: paused.filter((s) => s.pausedMs > TEN_MIN_MS).length,
    over20Min: paused.filter((s) => s.pausedMs > 2 * TEN_MIN_MS).length,
  };
}
const measured: Measured[] = [];
const workloads = new Map<number, Workload>();

async function workloadFor(seed: number): Promise<Workload> {
  let w = workloads.get(seed);
  if (w === undefined) {
    w = await loadWorkload({ ...base.workload, seed });
    workloads.set(seed, w);
  }
  return w;
}

interface Variant {
  label: string;
  router: SimRouter;
  concurrency: number;
  o?: Partial<Pick<SimulateOptions, "schedulerIntervalMs">>;
  knobs?: Partial<SimulateOptions["knobs"]>;
  shapeSample?: SimRunOptions["shapeSample"];
}

async function measure(v: Variant, seed: number): Promise<SimulateRunReport> {
  const workload = await workloadFor(seed);
  const t0 = performance.now();
  const { report, records } = runSimulation({
    router: v.router,
    concurrency: v.concurrency,
    workload,
    numBackends: base.numBackends,
    profile: base.profile,
    warmupMs: base.warmupMs,
    durationMs: base.durationMs,
    schedulerIntervalMs: v.o?.schedulerIntervalMs ?? base.schedulerIntervalMs,
    knobs: { ...base.knobs, ...v.knobs },
    engineSeed: seed,
    shapeSample: v.shapeSample,
  });
  const wallS = (performance.now() - t0) / 1000;
  measured.push({ label: v.label, seed, wallS, report, waits: waitsOf(records) });
  const hit = report.prompt_tokens.cache_hit_rate;
  process.stdout.write(
    `${v.label.padEnd(34)} seed ${seed}  ${report.steps_per_min.toFixed(1).padStart(6)} steps/min  hit ${hit === null ? "-" : (hit * 100).toFixed(1)}%  ${wallS.toFixed(1)} s wall  ${(simS / wallS).toFixed(0)} sim-s/wall-s\n`,
  );
  return report;
}

const ratioLine = (name: string, value: number, target: number, op: ">=") =>
  `${name.padEnd(28)} ${value.toFixed(3)}  (target ${op} ${target}: ${value >= target ? "met" : "NOT met"})`;

console.log(
  `# targets: deepseek trace, 2 x ${base.profile}, ${simS / 60} simulated min (window ${base.durationMs / 60_000} min), seeds ${seeds.join(",")}`,
);
const spm: Record<string, number[]> = {};
for (const seed of seeds) {
  for (const [router, c] of [
    ["default", 128],
    ["tr", 128],
    ["oracle", 128],
    ["default", 16],
    ["tr", 16],
  ] as const) {
    const r = await measure({ label: `${router} C=${c}`, router, concurrency: c }, seed);
    const key = `${router}@${c}`;
    spm[key] = [...(spm[key] ?? []), r.steps_per_min];
  }
}
const m = (k: string) => mean(spm[k]);
const trRuns = measured.filter((x) => x.label === "tr C=128");
console.log("");
console.log(ratioLine("tr / default at C=128", m("tr@128") / m("default@128"), 1.5, ">="));
console.log(ratioLine("tr / oracle at C=128", m("tr@128") / m("oracle@128"), 0.8, ">="));
console.log(ratioLine("tr / default at C=16", m("tr@16") / m("default@16"), 0.98, ">="));
console.log(
  `wall per simulated hour, tr C=128: ${mean(trRuns.map((x) => (x.wallS * 3600) / simS)).toFixed(1)} s (target <= 60 s)`,
);
const trAvg = (f: (x: Measured) => number) => mean(trRuns.map(f)).toFixed(1);
console.log(
  `starvation, tr C=128: forced resumes ${trAvg((x) => x.report.scheduler.forcedResumes)}, step p99 ${trAvg((x) => (x.report.step_latency_ms.p99 ?? 0) / 1000)} s, max ${trAvg((x) => (x.report.step_latency_ms.max ?? 0) / 1000)} s, paused steps > 10 min ${trAvg((x) => x.waits.over10Min)}, > 20 min ${trAvg((x) => x.waits.over20Min)} (of ${trAvg((x) => x.waits.pausedSteps)})`,
);

const extraVariants = (): Variant[] => {
  const tr = (label: string, knobs: Variant["knobs"], extra: Partial<Variant> = {}): Variant => ({
    label,
    router: "tr",
    concurrency: 128,
    knobs,
    ...extra,
  });
  const variants: Variant[] = [];
  if (args.sweep) {
    for (const placement of ["best-fit", "worst-fit"] as Placement[]) {
      for (const decay of [false, true]) {
        for (const intervalS of [1, 2, 5]) {
          variants.push(
            tr(
              `${placement}, decay ${decay ? "on" : "off"}, interval ${intervalS} s`,
              { placement, useActingTokenDecay: decay },
              { o: { schedulerIntervalMs: intervalS * 1000 } },
            ),
          );
        }
      }
    }
  }
  for (const n of headroomSteps) {
    variants.push(tr(`headroom steps ${n}`, { growthHeadroomSteps: n }));
  }
  for (const a of ageingS) variants.push(tr(`ageing ${a} s`, { ageingMs: a * 1000 }));
  for (const b of buffers) {
    variants.push(tr(`flat buffer ${b}`, { growthHeadroomSteps: 0, bufferPerProgram: b }));
  }
  if (args["no-credit"]) {
    // The core's prefix-sharing credit is max(0, materialised tokens − engine KV in use);
    // showing it a full cache (kv usage 1) turns the credit off and nothing else.
    variants.push(tr("no shared credit", {}, { shapeSample: (s) => ({ ...s, kvUsage: 1 }) }));
  }
  return variants;
};

const variants = extraVariants();
if (variants.length > 0) {
  console.log("\n# tr variants at C=128");
  const rows: string[][] = [];
  const sec = (ms: number) => (ms / 1000).toFixed(0);
  for (const v of variants) {
    for (const seed of seeds) await measure(v, seed);
    const runs = measured.filter((x) => x.label === v.label);
    const avg = (f: (x: Measured) => number) => mean(runs.map(f));
    const s = avg((x) => x.report.steps_per_min);
    const hit = avg((x) => x.report.prompt_tokens.cache_hit_rate ?? 0);
    const pre = avg((x) => x.report.backends.reduce((a, b) => a + b.preemptions, 0));
    const long = avg((x) => x.waits.over10Min / Math.max(1, x.waits.pausedSteps));
    rows.push([
      v.label,
      s.toFixed(1),
      (s / m("default@128")).toFixed(2),
      (s / m("oracle@128")).toFixed(3),
      (hit * 100).toFixed(1),
      pre.toFixed(0),
      avg((x) => x.report.scheduler.pauses).toFixed(0),
      avg((x) => x.report.scheduler.forcedResumes).toFixed(1),
      sec(avg((x) => x.report.step_latency_ms.p99 ?? 0)),
      sec(avg((x) => x.report.step_latency_ms.max ?? 0)),
      (long * 100).toFixed(1),
    ]);
  }
  const head = [
    `tr at C=128 (mean of seeds ${seeds.join(",")})`,
    "steps/min",
    "vs default",
    "vs oracle",
    "cache hit %",
    "engine preemptions",
    "core pauses",
    "forced resumes",
    "step p99 (s)",
    "step max (s)",
    "paused steps > 10 min (%)",
  ];
  console.log(`\n${markdownTable(head, rows)}`);
}

if (args.json) {
  const doc = measured.map((x) => ({
    label: x.label,
    seed: x.seed,
    wall_s: Math.round(x.wallS * 100) / 100,
    sim_s_per_wall_s: Math.round(simS / x.wallS),
    router: x.report.router,
    concurrency: x.report.concurrency,
    steps_per_min: x.report.steps_per_min,
    cache_hit_rate: x.report.prompt_tokens.cache_hit_rate,
    preemptions: x.report.backends.reduce((a, b) => a + b.preemptions, 0),
    scheduler: x.report.scheduler,
    step_latency_ms: x.report.step_latency_ms,
    paused_steps: x.waits.pausedSteps,
    paused_over_10_min: x.waits.over10Min,
    paused_over_20_min: x.waits.over20Min,
  }));
  writeFileSync(args.json, `${JSON.stringify({ runs: doc }, null, 2)}\n`);
}
