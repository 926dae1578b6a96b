/**
 * `npm run bench:simulate`, `maitred simulate` on its target configuration: the DeepSeek trace
 * on 2 × llama-3.1-8b-h100 engines with the profile's KV size, 10 min warm-up + 50 min window.
 * Its flags, its runs (in this process, one after another: default, tr and the oracle at 128
 * programs, default and tr at 16, per seed), the targets met or not, and the tr variants the
 * flags ask for (simulate-variants.ts).
 */
import { performance } from "node:perf_hooks";
import { listOfItems, nonNegative } from "../../config/values.ts";
import {
  runSimulation,
  type SimRunOptions,
  type SimRunResult,
} from "../../simulate/run-simulation.ts";
import { resolveSimulateFlags, type SimulateOptions } from "../../simulate/simulate-options.ts";
import { loadWorkload } from "../../workload/load-workload.ts";
import type { Workload, WorkloadSpec } from "../../workload/types.ts";
import { mean } from "../percentile.ts";
import type { RunRecords } from "../records.ts";
import type { ScriptArgs, ScriptSpec } from "../script-args.ts";
import { durationFlag, jsonFlag, seedsFlag, warmupFlag } from "../script-flags.ts";
import { type Out, writeJson } from "./scorecard.ts";
import {
  type Measured,
  preemptionsOf,
  trVariants,
  type Variant,
  variantRow,
  variantTable,
  type Waits,
} from "./simulate-variants.ts";

const numbers = listOfItems(nonNegative());
export const SIMULATE_SPEC = {
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

export type SimulateBenchArgs = ScriptArgs<typeof SIMULATE_SPEC.flags>;

/** The targets, per the ratio of steps/min each compares. */
const TARGETS = { overDefault: 1.5, overOracle: 0.8, overDefaultUnloaded: 0.98 };
/** Wall time of one simulated hour of tr at 128 programs, seconds. */
const WALL_PER_HOUR_TARGET_S = 60;
/** The target runs, per seed: the loaded level, then no KV pressure. */
const TARGET_RUNS = [
  ["default", 128],
  ["tr", 128],
  ["oracle", 128],
  ["default", 16],
  ["tr", 16],
] as const;

const TEN_MIN_MS = 600_000;

/** The target configuration over the flags' window. */
export const targetOptions = (args: SimulateBenchArgs): SimulateOptions =>
  resolveSimulateFlags({
    workload: "deepseek",
    profile: "llama-3.1-8b-h100",
    numBackends: "2",
    warmup: args.values.warmup,
    duration: args.values.duration,
  });

/** How long the steps that ended in the window `o` gives were held paused. */
export function waitsOf(
  records: RunRecords,
  o: Pick<SimulateOptions, "warmupMs" | "durationMs">,
): Waits {
  const end = o.warmupMs + o.durationMs;
  const paused = records.steps.filter(
    (s) => s.endMs >= o.warmupMs && s.endMs < end && s.pausedMs > 0,
  );
  return {
    pausedSteps: paused.length,
    over10Min: paused.filter((s) => s.pausedMs > TEN_MIN_MS).length,
    over20Min: paused.filter((s) => s.pausedMs > 2 * TEN_MIN_MS).length,
  };
}

export const ratioLine = (name: string, value: number, target: number) =>
  `${name.padEnd(28)} ${value.toFixed(3)}  (target >= ${target}: ${value >= target ? "met" : "NOT met"})`;

/** A list flag's numbers (none when not given). */
const numberList = (raw: string | undefined) =>
  (raw ?? "")
    .split(",")
    .filter((x) => x !== "")
    .map(Number);

/** What the runs need from outside: the simulator and the workload's loader. */
export interface SimulateDeps {
  simulate(o: SimRunOptions): SimRunResult;
  load(spec: WorkloadSpec): Promise<Workload>;
}

/** Each run as `--json` writes it. */
function jsonOf(x: Measured, simS: number) {
  return {
    label: x.label,
    seed: x.seed,
    wall_s: Math.round(x.wallS * 100) / 100,
    sim_s_per_wall_s: Math.round(simS / x.wallS),
    router: x.report.router,
    concurrency: x.report.concurrency,
    steps_per_min: x.report.steps_per_min,
    cache_hit_rate: x.report.prompt_tokens.cache_hit_rate,
    preemptions: preemptionsOf(x.report),
    scheduler: x.report.scheduler,
    step_latency_ms: x.report.step_latency_ms,
    paused_steps: x.waits.pausedSteps,
    paused_over_10_min: x.waits.over10Min,
    paused_over_20_min: x.waits.over20Min,
  };
}

/**
 * The benchmark: the target runs per seed with a line each, the targets, then the tr variants
 * and their table; `--json` gets every run. Returns the runs.
 */
export async function simulateTargets(
  args: SimulateBenchArgs,
  out: Out,
  deps: SimulateDeps = { simulate: runSimulation, load: loadWorkload },
): Promise<Measured[]> {
  const v = args.values;
  const seeds = v.seeds.split(",").map(Number);
  const base = targetOptions(args);
  const simS = (base.warmupMs + base.durationMs) / 1000;
  const measured: Measured[] = [];
  const workloads = new Map<number, Workload>();
  const workloadFor = async (seed: number) => {
    let w = workloads.get(seed);
    if (w === undefined) {
      w = await deps.load({ ...base.workload, seed });
      workloads.set(seed, w);
    }
    return w;
  };
  const measure = async (variant: Variant, seed: number) => {
    const workload = await workloadFor(seed);
    const t0 = performance.now();
    const { report, records } = deps.simulate({
      router: variant.router,
      concurrency: variant.concurrency,
      workload,
      numBackends: base.numBackends,
      profile: base.profile,
      warmupMs: base.warmupMs,
      durationMs: base.durationMs,
      schedulerIntervalMs: variant.o?.schedulerIntervalMs ?? base.schedulerIntervalMs,
      knobs: { ...base.knobs, ...variant.knobs },
      engineSeed: seed,
      shapeSample: variant.shapeSample,
    });
    const wallS = (performance.now() - t0) / 1000;
    measured.push({ label: variant.label, seed, wallS, report, waits: waitsOf(records, base) });
    const hit = report.prompt_tokens.cache_hit_rate;
    out.print(
      `${variant.label.padEnd(34)} seed ${seed}  ${report.steps_per_min.toFixed(1).padStart(6)} steps/min  hit ${hit === null ? "-" : (hit * 100).toFixed(1)}%  ${wallS.toFixed(1)} s wall  ${(simS / wallS).toFixed(0)} sim-s/wall-s\n`,
    );
    return report;
  };

  out.print(
    `# targets: deepseek trace, 2 x ${base.profile}, ${simS / 60} simulated min (window ${base.durationMs / 60_000} min), seeds ${seeds.join(",")}\n`,
  );
  const spm: Record<string, number[]> = {};
  for (const seed of seeds) {
    for (const [router, c] of TARGET_RUNS) {
      const r = await measure({ label: `${router} C=${c}`, router, concurrency: c }, seed);
      const key = `${router}@${c}`;
      spm[key] = [...(spm[key] ?? []), r.steps_per_min];
    }
  }
  const m = (k: string) => mean(spm[k]);
  const trRuns = measured.filter((x) => x.label === "tr C=128");
  const trAvg = (f: (x: Measured) => number) => mean(trRuns.map(f)).toFixed(1);
  out.print(
    [
      "",
      ratioLine("tr / default at C=128", m("tr@128") / m("default@128"), TARGETS.overDefault),
      ratioLine("tr / oracle at C=128", m("tr@128") / m("oracle@128"), TARGETS.overOracle),
      ratioLine("tr / default at C=16", m("tr@16") / m("default@16"), TARGETS.overDefaultUnloaded),
      `wall per simulated hour, tr C=128: ${mean(trRuns.map((x) => (x.wallS * 3600) / simS)).toFixed(1)} s (target <= ${WALL_PER_HOUR_TARGET_S} s)`,
      `starvation, tr C=128: forced resumes ${trAvg((x) => x.report.scheduler.forcedResumes)}, step p99 ${trAvg((x) => (x.report.step_latency_ms.p99 ?? 0) / 1000)} s, max ${trAvg((x) => (x.report.step_latency_ms.max ?? 0) / 1000)} s, paused steps > 10 min ${trAvg((x) => x.waits.over10Min)}, > 20 min ${trAvg((x) => x.waits.over20Min)} (of ${trAvg((x) => x.waits.pausedSteps)})`,
      "",
    ].join("\n"),
  );

  const variants = trVariants({
    sweep: v.sweep,
    headroomSteps: numberList(v["headroom-steps"]),
    ageingS: numberList(v.ageing),
    buffers: numberList(v.buffers),
    noCredit: v["no-credit"],
  });
  if (variants.length > 0) {
    out.print("\n# tr variants at C=128\n");
    const reference = { default: m("default@128"), oracle: m("oracle@128") };
    const rows: string[][] = [];
    for (const variant of variants) {
      for (const seed of seeds) await measure(variant, seed);
      const runs = measured.filter((x) => x.label === variant.label);
      rows.push(variantRow(variant.label, runs, reference));
    }
    out.print(`\n${variantTable(rows, seeds)}\n`);
  }
  if (v.json) writeJson(v.json, { runs: measured.map((x) => jsonOf(x, simS)) });
  return measured;
}
