/**
 * The frontier `--tail` names, measured: per workload one markdown table with a row per preset
 * (bounded, balanced, throughput) and the default router as the reference, giving what each
 * preset buys in steps/min and what it costs in the longest wait. Each workload setting is the
 * scorecard's (scripts/bench-tr.ts): 2 × llama-3.1-8b-h100 with 26,000 KV blocks each, 128
 * programs, the DeepSeek and Gemini traces over 10 min warm-up + 50 min window and the
 * claude-code preset over 2 h + 10 h (its first hours are start-up). On DeepSeek it also runs
 * `--ageing 0 --max-pause 1800` beside `--tail throughput`: the preset only sets those two
 * flags, so the two runs should give the same report.
 *
 * Every figure is measured by the runs this invocation makes, one child process per run,
 * `--jobs` at a time (default: one per core); the wall time of each goes to stderr and into the
 * JSON. Under each table, the `maitred simulate` command of every run it reads.
 *
 *   node_modules/.bin/node scripts/bench-tail.ts [--seeds 7,1]
 *     [--workloads deepseek,gemini,claude-code] [--quick] [--jobs 2] [--json out.json]
 */
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { markdownTable } from "../src/bench/markdown-table.ts";
import { mean } from "../src/bench/percentile.ts";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { scriptArgs } from "../src/bench/script-entry.ts";
import { JOBS_FLAG, jsonFlag, ONE_FLAG, QUICK_FLAG, seedList } from "../src/bench/script-flags.ts";
import {
  benchEntry,
  CLAUDE_CODE_WINDOW,
  HOUR_WINDOW,
  jobsOf,
  QUICK_WINDOW,
  type RunWindow,
  runInChildren,
  simulateOnce,
  span,
} from "../src/bench/sim-runs.ts";
import { camel } from "../src/config/setting.ts";
import { TAIL_NAMES, type TailPreset } from "../src/config/tail-preset.ts";
import { listOf } from "../src/config/values.ts";
import type { SchedulerCounters } from "../src/core/api.ts";
import { AGEING_MS } from "../src/core/scheduler-constants.ts";
import { resolveSimulateFlags, type SimulateOptions } from "../src/simulate/simulate-options.ts";
import type { SimulateRunReport } from "../src/simulate/simulate-report.ts";

const WORKLOADS = ["deepseek", "gemini", "claude-code"] as const;
type WorkloadName = (typeof WORKLOADS)[number];

const LABELS: Record<WorkloadName, string> = {
  deepseek: "DeepSeek trace",
  gemini: "Gemini trace",
  "claude-code": "claude-code preset",
};

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

/** A table row: the plain proxy, tr with a preset, or tr with the throughput bounds by hand. */
type RowName = "default" | TailPreset | "by-hand";

interface RunSpec {
  workload: WorkloadName;
  seed: number;
  row: RowName;
  /** The run's `maitred simulate` flags, in the order the printed command gives them. */
  flags: [string, string][];
}

interface RunResult {
  spec: RunSpec;
  command: string;
  stepsPerMin: number;
  stepS: { p50: number | null; p95: number | null; p99: number | null };
  /** Longest pause of a step answered in the window. */
  stepPauseMaxS: number;
  /** Longest wait of a request still parked when the window closed (0: none was). */
  stillParkedMaxS: number;
  completionS: { p50: number | null; p99: number | null; count: number; unfinished: number };
  /** Share of prompt tokens served from the prefix cache, 0–1. */
  hit: number | null;
  /** Prompt tokens prefilled again (not from the cache). */
  prefilled: number | null;
  scheduler: SchedulerCounters;
  /** The bounds the core ran with, as its report states them. */
  ageingS: number;
  maxPauseS: number;
  /** Digest of the report but for the settings it echoes: equal digests, equal runs. */
  digest: string;
  wallS: number;
}

const SPEC = {
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
      default: WORKLOADS.join(","),
      description: `a table each: ${WORKLOADS.join(", ")}`,
      check: listOf(WORKLOADS),
    },
    quick: QUICK_FLAG,
    jobs: JOBS_FLAG,
    json: jsonFlag(),
  },
} satisfies ScriptSpec;
const { values: args, parsed } = scriptArgs(SPEC);
const seconds = (ms: number | null) => (ms === null ? null : ms / 1000);

/** The figures of a report apart from the settings it was run with. */
function digestOf(report: SimulateRunReport): string {
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
const optionsOf = (spec: RunSpec): SimulateOptions =>
  resolveSimulateFlags(Object.fromEntries(spec.flags.map(([k, v]) => [camel(k), v])));

/** One run, in this process (the child's side of `--one`). */
async function runOne(spec: RunSpec): Promise<RunResult> {
  const o = optionsOf(spec);
  const { report, wallS } = await simulateOnce(o);
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
}

const self = fileURLToPath(import.meta.url);
const runAll = (specs: RunSpec[], jobs: number) =>
  runInChildren<RunSpec, RunResult>(self, specs, jobs, (r) => {
    const s = r.spec;
    return `${s.workload} seed ${s.seed} ${rowLabel(s.row)}: ${r.stepsPerMin.toFixed(1)} steps/min (${r.wallS.toFixed(1)} s wall)`;
  });

function rowLabel(row: RowName): string {
  if (row === "default") return "default (reference)";
  if (row === "by-hand") return `tr --ageing 0 --max-pause 1800`;
  return `tr --tail ${row}`;
}

function windowOf(workload: WorkloadName): RunWindow {
  if (args.quick) return QUICK_WINDOW;
  return workload === "claude-code" ? CLAUDE_CODE_WINDOW : HOUR_WINDOW;
}

function specOf(workload: WorkloadName, seed: number, row: RowName): RunSpec {
  const w = windowOf(workload);
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

/** Mean over the seeds that have the figure; null when none has. */
function meanOf(xs: readonly (number | null)[]): number | null {
  const known = xs.filter((x): x is number => x !== null);
  return known.length === 0 ? null : mean(known);
}

const fixed = (v: number | null, digits: number) => (v === null ? "-" : v.toFixed(digits));

async function main(): Promise<void> {
  const seeds = parsed.seeds;
  const workloads = parsed.workloads;
  const jobs = jobsOf(args.jobs);
  const rows: RowName[] = ["default", ...TAIL_NAMES];

  const specs: RunSpec[] = [];
  for (const workload of workloads) {
    for (const seed of seeds) {
      for (const row of rows) specs.push(specOf(workload, seed, row));
      if (workload === "deepseek") specs.push(specOf(workload, seed, "by-hand"));
    }
  }
  // A flag the simulator refuses fails here, once, rather than in every child.
  for (const s of specs) optionsOf(s);
  const t0 = performance.now();
  console.error(`# ${specs.length} runs, ${jobs} at a time`);
  // The claude-code runs simulate 12 h rather than one: started first, they do not leave one
  // worker running alone at the end.
  const long = (s: RunSpec) => (s.workload === "claude-code" ? 0 : 1);
  const results = await runAll(
    [...specs].sort((a, b) => long(a) - long(b)),
    jobs,
  );
  const find = (workload: WorkloadName, seed: number, row: RowName): RunResult => {
    const r = results.find(
      (x) => x.spec.workload === workload && x.spec.seed === seed && x.spec.row === row,
    );
    if (r === undefined) throw new Error(`no run ${workload} seed ${seed} ${row}`);
    return r;
  };

  const seedList = seeds.join(", ");
  const checks: {
    seed: number;
    ratio: number;
    identical: boolean;
    bounds: [number, number][];
  }[] = [];
  for (const workload of workloads) {
    const o = optionsOf(specOf(workload, seeds[0], "bounded"));
    const window = `${span(o.warmupMs)} warm-up + ${span(o.durationMs)} window`;
    console.log(
      `\n### ${LABELS[workload]}: ${o.numBackends} × ${o.profile}, ${o.numGpuBlocks} KV blocks per engine, ${o.concurrency[0]} programs, ${window}\n`,
    );
    console.log(
      `Seeds ${seedList}: figures are means over the seeds, but for steps/min per seed and the longest wait (the max over the seeds); tr ÷ default is the mean of each seed's ratio. The bounds are those the core ran with, as its report states them. Longest wait: the longest a step was held paused by the router (a step answered in the window, or a request still parked when it closed). Program completion: first request to release, over the programs completed in the window.\n`,
    );
    const head = [
      "router",
      "ageing / max pause (s)",
      "steps/min",
      `steps/min per seed (${seeds.map((s) => `seed ${s}`).join(" / ")})`,
      "tr ÷ default",
      "step p50 / p95 / p99 (s)",
      "longest wait of one step (s)",
      "program completion p50 / p99 (s)",
      "cache hit %",
      "re-prefilled tokens (M)",
    ];
    const lines: string[][] = [];
    for (const row of rows) {
      const runs = seeds.map((s) => find(workload, s, row));
      const m = (f: (r: RunResult) => number | null, d: number) => fixed(meanOf(runs.map(f)), d);
      const ratio = mean(
        seeds.map(
          (s) => find(workload, s, row).stepsPerMin / find(workload, s, "default").stepsPerMin,
        ),
      );
      const bounds =
        row === "default"
          ? "-"
          : [...new Set(runs.map((r) => `${r.ageingS} / ${r.maxPauseS}`))].join(", ");
      const cells = [
        rowLabel(row),
        bounds,
        m((r) => r.stepsPerMin, 1),
        runs.map((r) => r.stepsPerMin.toFixed(1)).join(" / "),
        ratio.toFixed(2),
        (["p50", "p95", "p99"] as const).map((q) => m((r) => r.stepS[q], 1)).join(" / "),
        Math.max(...runs.map((r) => Math.max(r.stepPauseMaxS, r.stillParkedMaxS))).toFixed(0),
        `${m((r) => r.completionS.p50, 0)} / ${m((r) => r.completionS.p99, 0)}`,
        m((r) => (r.hit === null ? null : r.hit * 100), 1),
        m((r) => (r.prefilled === null ? null : r.prefilled / 1e6), 1),
      ];
      lines.push(cells);
    }
    console.log(markdownTable(head, lines, 2));
    if (workload === "deepseek") {
      console.log(
        "\n`--tail throughput` against `--ageing 0 --max-pause 1800` (the preset sets only these two bounds):\n",
      );
      const byHandHead = [
        "seed",
        "steps/min ratio (by hand ÷ preset)",
        "same report",
        "ageing / max pause (s) preset, by hand",
      ];
      const byHandRows: string[][] = [];
      for (const seed of seeds) {
        const preset = find(workload, seed, "throughput");
        const byHand = find(workload, seed, "by-hand");
        const check = {
          seed,
          ratio: byHand.stepsPerMin / preset.stepsPerMin,
          identical: byHand.digest === preset.digest,
          bounds: [preset, byHand].map((r): [number, number] => [r.ageingS, r.maxPauseS]),
        };
        checks.push(check);
        byHandRows.push([
          String(seed),
          check.ratio.toFixed(4),
          `${check.identical ? "yes" : "no"} (${preset.digest} vs ${byHand.digest})`,
          check.bounds.map(([a, p]) => `${a} / ${p}`).join(", "),
        ]);
      }
      console.log(markdownTable(byHandHead, byHandRows, byHandHead.slice(2)));
    }
    console.log("\nThe runs (one line per row and seed):\n");
    console.log("```sh");
    for (const row of [...rows, ...(workload === "deepseek" ? ["by-hand" as const] : [])]) {
      for (const seed of seeds) console.log(find(workload, seed, row).command);
    }
    console.log("```");
  }

  const wall = results.reduce((a, r) => a + r.wallS, 0);
  console.error(
    `# ${results.length} runs: ${wall.toFixed(0)} s of run wall time, ${((performance.now() - t0) / 1000).toFixed(0)} s elapsed`,
  );
  if (args.json !== undefined) {
    writeFileSync(
      args.json,
      `${JSON.stringify({ seeds, runs: results, throughput_by_hand: checks }, null, 2)}\n`,
    );
  }
}

await benchEntry("bench:tail", args.one, runOne, main);
