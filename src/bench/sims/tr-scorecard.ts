/**
 * `npm run bench:tr`, the tr scheduler's scorecard on `maitred simulate`: its flags, its runs
 * (one per router, concurrency, seed and tool-time scale, each `runSimulation` through
 * `simulateSweep`), the settings `--preset all` goes through, and the scorecard itself, a
 * table per setting and, with several settings, their summary (tr-report.ts writes them).
 */
import { performance } from "node:perf_hooks";
import { DEFAULT_TAIL, TAIL_SETTING } from "../../config/tail-preset.ts";
import { integer, listOfItems, oneOf, positive } from "../../config/values.ts";
import type { SimRouter } from "../../simulate/run-simulation.ts";
import { resolveSimulateFlags, type SimulateOptions } from "../../simulate/simulate-options.ts";
import type { ScriptArgs, ScriptSpec } from "../script-args.ts";
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
} from "../script-flags.ts";
import {
  CLAUDE_CODE_WINDOW,
  HOUR_WINDOW,
  jobsOf,
  QUICK_WINDOW,
  simulateOnce,
  wallLine,
} from "../sim-runs.ts";
import { type RunsOf, type SimIo, writeJson } from "./scorecard.ts";
import {
  SCORECARD_TOOL_SCALE,
  type SummaryRow,
  settingReport,
  summaryReport,
  type TrPlan,
  type TrResult,
  type TrRunSpec,
  type TrSetting,
} from "./tr-report.ts";

/** The loaded level and at most one more, each once. */
const concurrencies = listOfItems(integer(1, 100_000))
  .refine((c) => c.length <= 2, { error: "takes the loaded level and at most one more" })
  .refine((c) => new Set(c).size === c.length, { error: "lists a value twice" });

export const TR_SPEC = {
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

export type TrArgs = ScriptArgs<typeof TR_SPEC.flags>;

/** The simulator's own flags for one run: its parsers validate them as `maitred simulate`. */
function simulateOptions(spec: Omit<TrRunSpec, "router" | "concurrency">): SimulateOptions {
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

/** One run, in this process (the child's side of `--one`), and its line in the parent. */
export const TR_RUNS: RunsOf<TrRunSpec, TrResult> = {
  async runOne(spec) {
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
  },
  describe: ({ spec: s, stepsPerMin, wallS }) =>
    `${s.workload} ${s.backends}b seed ${s.seed} ${s.router} C=${s.concurrency} tool×${s.toolScale}: ${stepsPerMin.toFixed(1)} steps/min (${wallS.toFixed(1)} s wall)`,
};

/** The settings of the scorecard: the flags' one, or `--preset all`'s six. */
export function trSettings(args: TrArgs): TrSetting[] {
  const { values: v, parsed } = args;
  if (v.preset === undefined) {
    return [
      { label: v.workload, workload: v.workload, backends: parsed.backends, priority: v.priority },
    ];
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

/** What the flags ask of every setting: seeds, the two concurrencies, the tool-time rows. */
export function trPlan(args: TrArgs): TrPlan {
  const sweep = args.parsed["tool-scales"];
  const [bigC, smallC] = args.parsed.concurrency;
  return {
    seeds: args.parsed.seeds,
    bigC,
    smallC,
    sweep,
    // Scale 1 is the base runs; the scorecard's own × 50 row runs whether or not it is listed.
    scaled: [...new Set([...sweep, SCORECARD_TOOL_SCALE])].filter((x) => x !== 1),
  };
}

/**
 * One run of a setting. Its window: the flags' where given, else --quick's, else the setting's
 * own, else the hour.
 */
export function trRunSpec(
  args: TrArgs,
  st: TrSetting,
  router: SimRouter,
  concurrency: number,
  seed: number,
  toolScale = 1,
): TrRunSpec {
  const v = args.values;
  const window = v.quick
    ? QUICK_WINDOW
    : { warmup: st.warmup ?? HOUR_WINDOW.warmup, duration: st.duration ?? HOUR_WINDOW.duration };
  return {
    router,
    concurrency,
    seed,
    toolScale,
    workload: st.workload,
    backends: st.backends,
    blocks: v["num-gpu-blocks"],
    // Priorities are a tr setting; default and the oracle ignore them.
    priority: st.priority && router === "tr",
    tail: v.tail,
    warmup: v.warmup ?? window.warmup,
    duration: v.duration ?? window.duration,
  };
}

/** Every run of a setting, per seed: the three routers, the second concurrency, the scales. */
export function settingRuns(args: TrArgs, st: TrSetting, p: TrPlan): TrRunSpec[] {
  const run = (router: SimRouter, c: number, seed: number, ts = 1) =>
    trRunSpec(args, st, router, c, seed, ts);
  return p.seeds.flatMap((seed) => [
    run("default", p.bigC, seed),
    run("tr", p.bigC, seed),
    run("oracle", p.bigC, seed),
    ...(p.smallC === undefined ? [] : [run("default", p.smallC, seed), run("tr", p.smallC, seed)]),
    ...p.scaled.flatMap((ts) => [run("default", p.bigC, seed, ts), run("tr", p.bigC, seed, ts)]),
  ]);
}

/**
 * The scorecard: per setting its runs, then its table; with several settings, the summary;
 * every run with `--json`. Returns the runs.
 */
export async function trScorecard(
  args: TrArgs,
  io: SimIo<TrRunSpec, TrResult>,
): Promise<TrResult[]> {
  const plan = trPlan(args);
  const jobs = jobsOf(args.values.jobs);
  const all: TrResult[] = [];
  const summary: SummaryRow[] = [];
  const t0 = performance.now();
  for (const st of trSettings(args)) {
    // Bad flags (workload, blocks) fail here, once, rather than in every child.
    const o = simulateOptions(trRunSpec(args, st, "tr", plan.bigC, plan.seeds[0]));
    const specs = settingRuns(args, st, plan);
    io.note(`# ${st.label}: ${specs.length} runs, ${jobs} at a time\n`);
    const results = await io.run(specs, jobs);
    all.push(...results);
    const report = settingReport(st, o, results, plan);
    io.print(report.text);
    summary.push(report.summary);
  }
  if (summary.length > 1) io.print(summaryReport(summary, plan));
  io.note(wallLine(all, t0));
  if (args.values.json !== undefined) writeJson(args.values.json, { runs: all });
  return all;
}
