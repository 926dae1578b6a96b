/**
 * The tr scheduler's scorecard on `maitred simulate`: the same runs, ratios and tail figures
 * for every setting, printed as markdown. Default setting: the mini-swe-agent DeepSeek trace,
 * 2 × llama-3.1-8b-h100 with 26,000 KV blocks each, seed 7, 10 min warm-up + 50 min window
 * (`--warmup`, `--duration`; without them the claude-code setting of `--preset all` runs
 * 2 h + 10 h, and the summary names each setting's window).
 *
 * Rows, per seed and (with several seeds) their mean: tr ÷ default and tr ÷ oracle steps/min
 * at the first `--concurrency` (128), the three routers' steps/min and step latency p99, the
 * longest time one step was held paused by tr in the window (a step answered in the window, or
 * a request still parked when it closed), tr ÷ default at the second concurrency (16), tr ÷
 * default with every tool time × 50 (always run), then one row per `--tool-scales` value with
 * tr and default steps/min and their ratio. Every figure is measured by the runs this
 * invocation makes. Runs go `--jobs` at a time (default: one per core) in child processes,
 * each one `runSimulation` through `simulateSweep`; the wall time of each goes to stderr and
 * into the JSON.
 *
 *   node_modules/.bin/node scripts/bench-tr.ts [--seeds 7,1] [--workload deepseek]
 *     [--backends 2] [--num-gpu-blocks 26000] [--tool-scales 1,5,20,50,100]
 *     [--concurrency 128,16] [--warmup 10m] [--duration 50m] [--priority] [--quick]
 *     [--tail bounded|balanced|throughput]
 *     [--jobs 2] [--json out.json]
 *   node_modules/.bin/node scripts/bench-tr.ts --preset all   (the DeepSeek and Gemini traces,
 *     the claude-code preset, a chat + agents mix with priorities on for tr, and DeepSeek on 1
 *     and 4 backends; then a summary table of the settings)
 */
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { markdownTable } from "../src/bench/markdown-table.ts";
import { mean } from "../src/bench/percentile.ts";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { scriptArgs } from "../src/bench/script-entry.ts";
import {
  backendsFlag,
  durationFlag,
  JOBS_FLAG,
  jsonFlag,
  ONE_FLAG,
  QUICK_FLAG,
  seedsFlag,
  simBlocksFlag,
  warmupFlag,
  workloadFlag,
} from "../src/bench/script-flags.ts";
import {
  benchEntry,
  CLAUDE_CODE_WINDOW,
  HOUR_WINDOW,
  jobsOf,
  QUICK_WINDOW,
  runInChildren,
  simulateOnce,
  span,
  wallLine,
} from "../src/bench/sim-runs.ts";
import { DEFAULT_TAIL, TAIL_SETTING } from "../src/config/tail-preset.ts";
import { integer, listOfItems, oneOf, positive } from "../src/config/values.ts";
import type { SimRouter } from "../src/simulate/run-simulation.ts";
import { resolveSimulateFlags, type SimulateOptions } from "../src/simulate/simulate-options.ts";

/** The tool-time factor the scorecard always reports, whatever `--tool-scales` lists. */
const SCORECARD_TOOL_SCALE = 50;

interface RunSpec {
  router: SimRouter;
  concurrency: number;
  seed: number;
  toolScale: number;
  workload: string;
  backends: number;
  blocks: string;
  priority: boolean;
  /** `--tail` preset of tr's bounds on waiting; undefined = the default. */
  tail?: string;
  /** Simulated warm-up and window. */
  warmup: string;
  duration: string;
}

interface RunResult {
  spec: RunSpec;
  stepsPerMin: number;
  p99S: number;
  /** Longest pause of a step answered in the window. */
  stepPauseMaxS: number;
  /** Longest wait of a request still parked when the window closed (0: none was). */
  stillParkedMaxS: number;
  hit: number | null;
  wallS: number;
}

interface Setting {
  label: string;
  workload: string;
  backends: number;
  priority: boolean;
  /** Its own warm-up and window, where the default hour holds less than one program's life. */
  warmup?: string;
  duration?: string;
}

/** The loaded level and at most one more, each once. */
const concurrencies = listOfItems(integer(1, 100_000))
  .refine((c) => c.length <= 2, { error: "takes the loaded level and at most one more" })
  .refine((c) => new Set(c).size === c.length, { error: "lists a value twice" });

const SPEC = {
  name: "bench:tr",
  summary:
    "The tr scheduler's scorecard in `maitred simulate`: tr ÷ default and ÷ oracle steps/min, step p99 and the longest pause, at two concurrencies and over tool-time scales, as markdown.",
  runtime:
    "not timed; 13 runs of one simulated hour per seed, --jobs at a time, one line each on stderr; scales with --seeds × --tool-scales, and --preset all runs 6 settings (claude-code's over 12 simulated hours)",
  flags: {
    one: ONE_FLAG,
    seeds: seedsFlag("7", "seeds; a column each, and their mean"),
    workload: workloadFlag(),
    backends: backendsFlag("2", "simulated engines"),
    "num-gpu-blocks": simBlocksFlag({ default: "26000" }, "KV blocks of 16 tokens per engine"),
    "tool-scales": {
      arg: "<list>",
      default: "1,5,20,50,100",
      description: `tool-time factors, a row each (× ${SCORECARD_TOOL_SCALE} always runs)`,
      check: listOfItems(positive()),
    },
    // No defaults here: a setting's own window applies only where these are not given.
    warmup: warmupFlag({ defaultText: "10m; claude-code in --preset all 2h; --quick 2m" }),
    duration: durationFlag({ defaultText: "50m; claude-code in --preset all 10h; --quick 8m" }),
    concurrency: {
      arg: "<list>",
      default: "128,16",
      description: "programs in flight: the loaded level, then at most one more",
      check: concurrencies,
    },
    priority: { type: "boolean", description: "priority classes on for tr" },
    tail: {
      arg: "<preset>",
      defaultText: DEFAULT_TAIL,
      description: "tr's bounds on waiting, as `maitred simulate --tail`",
      check: TAIL_SETTING.schema,
    },
    quick: QUICK_FLAG,
    preset: {
      arg: "all",
      description:
        "all: DeepSeek, Gemini, claude-code, a chat + agents mix with priorities, DeepSeek on 1 and 4 backends, then a summary",
      check: oneOf(["all"]),
    },
    jobs: JOBS_FLAG,
    json: jsonFlag(),
  },
} satisfies ScriptSpec;
const { values: args, parsed } = scriptArgs(SPEC);

/** The simulator's own flags for one run: its parsers validate them as `maitred simulate`. */
function simulateOptions(spec: Omit<RunSpec, "router" | "concurrency">): SimulateOptions {
  return resolveSimulateFlags({
    workload: spec.workload,
    numBackends: String(spec.backends),
    numGpuBlocks: spec.blocks,
    seed: String(spec.seed),
    toolTimeScale: String(spec.toolScale),
    warmup: spec.warmup,
    duration: spec.duration,
    ...(spec.priority ? { priority: true } : {}),
    ...(spec.tail === undefined ? {} : { tail: spec.tail }),
  });
}

/** One run, in this process (the child's side of `--one`). */
async function runOne(spec: RunSpec): Promise<RunResult> {
  const o = simulateOptions(spec);
  const { report, wallS } = await simulateOnce({
    ...o,
    routers: [spec.router],
    concurrency: [spec.concurrency],
  });
  return {
    spec,
    stepsPerMin: report.steps_per_min,
    p99S: (report.step_latency_ms.p99 ?? 0) / 1000,
    stepPauseMaxS: (report.paused_ms.per_step_max ?? 0) / 1000,
    stillParkedMaxS: (report.still_parked_max_ms ?? 0) / 1000,
    hit: report.prompt_tokens.cache_hit_rate,
    wallS,
  };
}

const self = fileURLToPath(import.meta.url);
const runAll = (specs: RunSpec[], jobs: number) =>
  runInChildren<RunSpec, RunResult>(self, specs, jobs, (r) => {
    const s = r.spec;
    return `${s.workload} ${s.backends}b seed ${s.seed} ${s.router} C=${s.concurrency} tool×${s.toolScale}: ${r.stepsPerMin.toFixed(1)} steps/min (${r.wallS.toFixed(1)} s wall)`;
  });

function settings(backends: number): Setting[] {
  if (args.preset === undefined) {
    return [{ label: args.workload, workload: args.workload, backends, priority: args.priority }];
  }
  return [
    { label: "DeepSeek trace", workload: "deepseek", backends: 2, priority: false },
    { label: "Gemini trace", workload: "gemini", backends: 2, priority: false },
    {
      label: "claude-code preset",
      workload: "claude-code",
      backends: 2,
      priority: false,
      ...CLAUDE_CODE_WINDOW,
    },
    {
      label: "chat@interactive 0.2 + DeepSeek@bulk 0.8, priorities on",
      workload: "mix:chat@interactive=0.2,deepseek@bulk=0.8",
      backends: 2,
      priority: true,
    },
    { label: "DeepSeek, 1 backend", workload: "deepseek", backends: 1, priority: false },
    { label: "DeepSeek, 4 backends", workload: "deepseek", backends: 4, priority: false },
  ];
}

/** A row of figures per seed (several for "a / b / c" cells); the mean is taken per figure. */
interface Row {
  label: string;
  digits: number;
  values(seed: number): number[];
  /** Appended to each cell (e.g. the ratio of a sweep row). */
  suffix?: (seed: number | "mean") => string;
}

async function main(): Promise<void> {
  const seeds = parsed.seeds;
  const [bigC, smallC] = parsed.concurrency;
  const backends = parsed.backends;
  const jobs = jobsOf(args.jobs);
  const sweep = parsed["tool-scales"];
  // Scale 1 is the base runs; the scorecard's own × 50 row runs whether or not it is listed.
  const scaled = [...new Set([...sweep, SCORECARD_TOOL_SCALE])].filter((x) => x !== 1);
  const all: RunResult[] = [];
  const summary: { label: string; cells: string[] }[] = [];
  const t0 = performance.now();

  for (const st of settings(backends)) {
    const spec = (router: SimRouter, c: number, seed: number, toolScale = 1): RunSpec => ({
      router,
      concurrency: c,
      seed,
      toolScale,
      workload: st.workload,
      backends: st.backends,
      blocks: args["num-gpu-blocks"],
      // Priorities are a tr setting; default and the oracle ignore them.
      priority: st.priority && router === "tr",
      tail: args.tail,
      // Given flags win, then --quick, then the setting's own window, then the hour.
      warmup: args.warmup ?? (args.quick ? QUICK_WINDOW.warmup : (st.warmup ?? HOUR_WINDOW.warmup)),
      duration:
        args.duration ??
        (args.quick ? QUICK_WINDOW.duration : (st.duration ?? HOUR_WINDOW.duration)),
    });
    // Bad flags (workload, blocks) fail here, once, rather than in every child.
    const o = simulateOptions(spec("tr", bigC, seeds[0]));
    const specs: RunSpec[] = [];
    for (const seed of seeds) {
      specs.push(spec("default", bigC, seed), spec("tr", bigC, seed), spec("oracle", bigC, seed));
      if (smallC !== undefined) specs.push(spec("default", smallC, seed), spec("tr", smallC, seed));
      for (const ts of scaled) {
        specs.push(spec("default", bigC, seed, ts), spec("tr", bigC, seed, ts));
      }
    }
    console.error(`# ${st.label}: ${specs.length} runs, ${jobs} at a time`);
    const results = await runAll(specs, jobs);
    all.push(...results);
    const find = (router: SimRouter, c: number, seed: number, ts = 1): RunResult => {
      const r = results.find(
        (x) =>
          x.spec.router === router &&
          x.spec.concurrency === c &&
          x.spec.seed === seed &&
          x.spec.toolScale === ts,
      );
      if (r === undefined) throw new Error(`no run ${router} C=${c} seed ${seed} tool×${ts}`);
      return r;
    };
    const ratio = (c: number, seed: number, ts = 1, over: SimRouter = "default") =>
      find("tr", c, seed, ts).stepsPerMin / find(over, c, seed, ts).stepsPerMin;
    const three = (seed: number) => [
      find("tr", bigC, seed),
      find("default", bigC, seed),
      find("oracle", bigC, seed),
    ];
    const longestPause = (seed: number) => {
      const r = find("tr", bigC, seed);
      return Math.max(r.stepPauseMaxS, r.stillParkedMaxS);
    };

    const rows: Row[] = [
      {
        label: `tr ÷ default steps/min, ${bigC} programs`,
        digits: 2,
        values: (s) => [ratio(bigC, s)],
      },
      {
        label: `tr ÷ oracle steps/min, ${bigC} programs`,
        digits: 2,
        values: (s) => [ratio(bigC, s, 1, "oracle")],
      },
      {
        label: `steps/min tr / default / oracle, ${bigC} programs`,
        digits: 1,
        values: (s) => three(s).map((r) => r.stepsPerMin),
      },
      {
        label: `step latency p99 (s) tr / default / oracle, ${bigC} programs`,
        digits: 0,
        values: (s) => three(s).map((r) => r.p99S),
      },
      {
        label: `tr longest pause of one step (s), ${bigC} programs`,
        digits: 0,
        values: (s) => [longestPause(s)],
      },
    ];
    if (smallC !== undefined) {
      rows.push({
        label: `tr ÷ default steps/min, ${smallC} programs`,
        digits: 3,
        values: (s) => [ratio(smallC, s)],
      });
    }
    rows.push({
      label: `tr ÷ default steps/min, tool time × ${SCORECARD_TOOL_SCALE}`,
      digits: 2,
      values: (s) => [ratio(bigC, s, SCORECARD_TOOL_SCALE)],
    });
    for (const ts of sweep) {
      const pair = (s: number) => [
        find("tr", bigC, s, ts).stepsPerMin,
        find("default", bigC, s, ts).stepsPerMin,
      ];
      rows.push({
        label: `tool time × ${ts}: steps/min tr / default (tr ÷ default)`,
        digits: 1,
        values: pair,
        suffix: (s) => {
          const r = s === "mean" ? mean(seeds.map((x) => ratio(bigC, x, ts))) : ratio(bigC, s, ts);
          return ` (${r.toFixed(2)})`;
        },
      });
    }

    const cols = seeds.map((s) => `seed ${s}`);
    if (seeds.length > 1) cols.push("mean");
    const cell = (row: Row, seed: number | "mean") => {
      const v =
        seed === "mean"
          ? row.values(seeds[0]).map((_, k) => mean(seeds.map((s) => row.values(s)[k])))
          : row.values(seed);
      return v.map((x) => x.toFixed(row.digits)).join(" / ") + (row.suffix?.(seed) ?? "");
    };
    const window = `${span(o.warmupMs)} warm-up + ${span(o.durationMs)} window`;
    console.log(
      `\n### ${st.label}: ${st.backends} × ${o.profile}, ${o.numGpuBlocks ?? "the profile's"} KV blocks per engine, ${window}${st.priority ? ", priorities on for tr" : ""}\n`,
    );
    console.log(
      markdownTable(
        ["measure", ...cols],
        rows.map((row) => [
          row.label,
          ...seeds.map((s) => cell(row, s)),
          ...(seeds.length > 1 ? [cell(row, "mean")] : []),
        ]),
      ),
    );
    // The summary reads the mean over seeds (the one seed's figure with one seed).
    const m = (f: (seed: number) => number, d: number) => mean(seeds.map(f)).toFixed(d);
    summary.push({
      label: `${st.label} (${window})`,
      cells: [
        m((s) => ratio(bigC, s), 2),
        m((s) => ratio(bigC, s, 1, "oracle"), 2),
        m((s) => find("tr", bigC, s).p99S, 0),
        m(longestPause, 0),
        ...(smallC === undefined ? [] : [m((s) => ratio(smallC, s), 3)]),
        ...scaled.map((ts) => m((s) => ratio(bigC, s, ts), 2)),
      ],
    });
  }

  if (summary.length > 1) {
    const head = [
      "setting",
      `tr ÷ default, ${bigC}`,
      "tr ÷ oracle",
      "tr p99 (s)",
      "tr longest pause (s)",
      ...(smallC === undefined ? [] : [`tr ÷ default, ${smallC}`]),
      ...scaled.map((ts) => `tool × ${ts}`),
    ];
    const over = seeds.length > 1 ? `mean of seeds ${seeds.join(", ")}` : `seed ${seeds[0]}`;
    console.log(
      `\n### Summary (${over}; ratios are steps/min at ${bigC} programs unless stated)\n`,
    );
    console.log(
      markdownTable(
        head,
        summary.map((s) => [s.label, ...s.cells]),
      ),
    );
  }
  process.stderr.write(wallLine(all, t0));
  if (args.json !== undefined) {
    writeFileSync(args.json, `${JSON.stringify({ runs: all }, null, 2)}\n`);
  }
}

await benchEntry("bench:tr", args.one, runOne, main);
