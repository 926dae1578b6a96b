/**
 * `npm run bench:tail`, the frontier `--tail` names, measured: its flags, its runs (per
 * workload and seed the default router, tr with each preset and, on DeepSeek, tr with the
 * throughput preset's two bounds given by hand), and the scorecard; tail-report.ts writes
 * the tables.
 */
import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";
import { camel } from "../../config/setting.ts";
import { TAIL_NAMES } from "../../config/tail-preset.ts";
import { listOf } from "../../config/values.ts";
import { AGEING_MS } from "../../core/scheduler-constants.ts";
import { resolveSimulateFlags, type SimulateOptions } from "../../simulate/simulate-options.ts";
import type { SimulateRunReport } from "../../simulate/simulate-report.ts";
import type { ScriptArgs, ScriptSpec } from "../script-args.ts";
import { JOBS_FLAG, jsonFlag, ONE_FLAG, QUICK_FLAG, seedList } from "../script-flags.ts";
import {
  CLAUDE_CODE_WINDOW,
  HOUR_WINDOW,
  jobsOf,
  QUICK_WINDOW,
  type RunWindow,
  simulateOnce,
  wallLine,
} from "../sim-runs.ts";
import { type RunsOf, type SimIo, writeJson } from "./scorecard.ts";
import {
  type ByHandCheck,
  type RowName,
  rowLabel,
  TAIL_WORKLOADS,
  type TailResult,
  type TailRunSpec,
  type TailWorkload,
  workloadReport,
} from "./tail-report.ts";

/** What every run shares, as `maitred simulate` flags. */
const CLUSTER: [string, string][] = [
  ["num-backends", "2"],
  ["profile", "llama-3.1-8b-h100"],
  ["num-gpu-blocks", "26000"],
  ["concurrency", "128"],
];

/** The throughput preset's two bounds given by hand, in seconds as the flags take them. */
const THROUGHPUT_BY_HAND: [string, string][] = [
  ["ageing", "0"],
  ["max-pause", "1800"],
];

export const TAIL_SPEC = {
  name: "bench:tail",
  summary:
    "What each --tail preset (bounded, balanced, throughput) buys in steps/min and costs in the longest wait, against the default router, per workload, as markdown.",
  runtime:
    "not timed; 26 runs, --jobs at a time, one line each on stderr; 8 of them are claude-code runs of 12 simulated hours, the rest one simulated hour; scales with --seeds × --workloads (--quick: 2m + 8m windows)",
  flags: {
    one: ONE_FLAG,
    seeds: {
      arg: "<list>",
      default: "7,1",
      description: "seeds, each once; figures are means",
      check: seedList().refine((s) => new Set(s).size === s.length, {
        error: "lists a value twice",
      }),
    },
    workloads: {
      arg: "<list>",
      default: TAIL_WORKLOADS.join(","),
      description: `a table each: ${TAIL_WORKLOADS.join(", ")}`,
      check: listOf(TAIL_WORKLOADS),
    },
    quick: QUICK_FLAG,
    jobs: JOBS_FLAG,
    json: jsonFlag(),
  },
} satisfies ScriptSpec;

export type TailArgs = ScriptArgs<typeof TAIL_SPEC.flags>;

const seconds = (ms: number | null) => (ms === null ? null : ms / 1000);

/** The figures of a report apart from the settings it was run with. */
export function digestOf(report: SimulateRunReport): string {
  const { simulated, ...rest } = report;
  const { scheduler_config: _config, ...cluster } = simulated;
  return createHash("sha256")
    .update(JSON.stringify({ ...rest, simulated: cluster }))
    .digest("hex")
    .slice(0, 16);
}

const commandOf = (flags: [string, string][]) =>
  ["maitred simulate", ...flags.map(([k, v]) => `--${k} ${v}`)].join(" ");

/** The simulator's own reading of a run's flags: its parsers validate them as the CLI's. */
export const tailOptions = (spec: TailRunSpec): SimulateOptions =>
  resolveSimulateFlags(Object.fromEntries(spec.flags.map(([k, v]) => [camel(k), v])));

/** One run, in this process (the child's side of `--one`), and its line in the parent. */
export const TAIL_RUNS: RunsOf<TailRunSpec, TailResult> = {
  async runOne(spec) {
    const { report, wallS } = await simulateOnce(tailOptions(spec));
    const lat = report.step_latency_ms;
    const pc = report.program_completion_ms;
    const config = report.simulated.scheduler_config;
    return {
      spec,
      command: commandOf(spec.flags),
      stepsPerMin: report.steps_per_min,
      stepS: { p50: seconds(lat.p50), p95: seconds(lat.p95), p99: seconds(lat.p99) },
      stepPauseMaxS: (report.paused_ms.per_step_max ?? 0) / 1000,
      stillParkedMaxS: (report.still_parked_max_ms ?? 0) / 1000,
      completionS: {
        p50: seconds(pc.p50),
        p99: seconds(pc.p99),
        count: pc.count,
        unfinished: pc.unfinished,
      },
      hit: report.prompt_tokens.cache_hit_rate,
      prefilled: report.prompt_tokens.prefilled,
      scheduler: report.scheduler,
      // Absent, the core's own default applies: the default preset's.
      ageingS: (config.ageingMs ?? AGEING_MS) / 1000,
      maxPauseS: config.maxPauseMs / 1000,
      digest: digestOf(report),
      wallS,
    };
  },
  describe: ({ spec: s, stepsPerMin, wallS }) =>
    `${s.workload} seed ${s.seed} ${rowLabel(s.row)}: ${stepsPerMin.toFixed(1)} steps/min (${wallS.toFixed(1)} s wall)`,
};

function windowOf(quick: boolean, workload: TailWorkload): RunWindow {
  if (quick) return QUICK_WINDOW;
  return workload === "claude-code" ? CLAUDE_CODE_WINDOW : HOUR_WINDOW;
}

/** One run: its row's router and bounds, the workload, the shared cluster, seed and window. */
export function tailRunSpec(
  quick: boolean,
  workload: TailWorkload,
  seed: number,
  row: RowName,
): TailRunSpec {
  const w = windowOf(quick, workload);
  const bounds: [string, string][] =
    row === "default" ? [] : row === "by-hand" ? THROUGHPUT_BY_HAND : [["tail", row]];
  return {
    workload,
    seed,
    row,
    flags: [
      ["router", row === "default" ? "default" : "tr"],
      ...bounds,
      ["workload", workload],
      ...CLUSTER,
      ["seed", String(seed)],
      ["warmup", w.warmup],
      ["duration", w.duration],
    ],
  };
}

/** The rows of every table: the reference, then each preset. */
export const TAIL_ROWS: readonly RowName[] = ["default", ...TAIL_NAMES];

/**
 * Every run, in the order the pool takes them: the claude-code runs simulate 12 h rather than
 * one, so started first they do not leave one worker running alone at the end.
 */
export function tailRuns(args: TailArgs): TailRunSpec[] {
  const quick = args.values.quick;
  const specs: TailRunSpec[] = [];
  for (const workload of args.parsed.workloads) {
    for (const seed of args.parsed.seeds) {
      for (const row of TAIL_ROWS) specs.push(tailRunSpec(quick, workload, seed, row));
      if (workload === "deepseek") specs.push(tailRunSpec(quick, workload, seed, "by-hand"));
    }
  }
  const long = (s: TailRunSpec) => (s.workload === "claude-code" ? 0 : 1);
  return specs.sort((a, b) => long(a) - long(b));
}

/**
 * The scorecard: every run, then a section per workload; `--json` gets the runs and the
 * by-hand checks, which are also returned.
 */
export async function tailScorecard(
  args: TailArgs,
  io: SimIo<TailRunSpec, TailResult>,
): Promise<{ seeds: number[]; runs: TailResult[]; throughput_by_hand: ByHandCheck[] }> {
  const { seeds, workloads } = args.parsed;
  const jobs = jobsOf(args.values.jobs);
  const specs = tailRuns(args);
  // A flag the simulator refuses fails here, once, rather than in every child.
  for (const s of specs) tailOptions(s);
  const t0 = performance.now();
  io.note(`# ${specs.length} runs, ${jobs} at a time\n`);
  const runs = await io.run(specs, jobs);
  const checks: ByHandCheck[] = [];
  for (const workload of workloads) {
    const o = tailOptions(tailRunSpec(args.values.quick, workload, seeds[0], "bounded"));
    const section = workloadReport(runs, workload, seeds, TAIL_ROWS, o);
    io.print(section.text);
    checks.push(...section.checks);
  }
  io.note(wallLine(runs, t0));
  const doc = { seeds, runs, throughput_by_hand: checks };
  if (args.values.json !== undefined) writeJson(args.values.json, doc);
  return doc;
}
