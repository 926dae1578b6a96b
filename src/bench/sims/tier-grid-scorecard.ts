/**
 * `npm run bench:tier-grid`: tr against the default router over a grid of host KV tiers,
 * workloads, concurrencies and seeds, and a fixed batch of programs, on the host-tier
 * scorecards' cluster (../sim-runs.ts `runTier`). Its flags, the runs the flags (or the runs
 * saved by earlier invocations, `--from-json`) make, and the scorecard; tier-grid-report.ts
 * writes the tables and the chart.
 */
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import type { z } from "zod";
import { parseFlag } from "../../config/setting.ts";
import {
  duration,
  integer,
  list,
  listOfItems,
  nonNegative,
  oneOf,
  parsedText,
} from "../../config/values.ts";
import { DEFAULT_TAIL, TAIL_NAMES, type TailPreset } from "../../core/scheduler-config.ts";
import { ConfigError } from "../../errors.ts";
import { parseWorkloadArg } from "../../workload/load-workload.ts";
import type { ScriptArgs, ScriptSpec } from "../script-args.ts";
import { fromJsonFlag, JOBS_FLAG, jsonFlag, ONE_FLAG, seedList } from "../script-flags.ts";
import {
  HOUR_WINDOW,
  jobsOf,
  QUICK_WINDOW,
  type RunWindow,
  readRuns,
  runTier,
  span,
  type TierRun,
  tierOptions,
  wallLine,
} from "../sim-runs.ts";
import { fix, type RunsOf, type SimIo, writeJson } from "./scorecard.ts";
import {
  isBatch,
  isGrid,
  isTr,
  type Lists,
  presetOf,
  type Result,
  tierGridChart,
  tierGridReport,
} from "./tier-grid-report.ts";

const DEFAULTS = {
  sizes: "0,50,200,400",
  workloads: "deepseek,gemini,claude-code",
  concurrency: "64,128",
  seeds: "7,1",
  "claude-window": "1h+3h",
  "batch-sizes": "0,200",
  "batch-seeds": "7",
  "batch-programs": "256",
  "batch-concurrency": "128",
  "batch-workload": "deepseek",
  presets: TAIL_NAMES.join(","),
};
/** `--quick`'s batch, unless the batch flags are given. */
const QUICK_BATCH = { programs: "32", concurrency: "16" };

/** `1h+3h`: warm-up + window, each a duration as `--warmup` and `--duration` take it. */
const windowPair = () =>
  parsedText((raw: string): RunWindow => {
    const parts = raw.split("+").map((p) => p.trim());
    const check = duration({ allowZero: true });
    if (parts.length !== 2 || parts.some((p) => !check.safeParse(p).success)) {
      throw new Error("must be warm-up + window, e.g. 1h+3h");
    }
    return { warmup: parts[0], duration: parts[1] };
  });

/** How each list flag is read, given or taken from DEFAULTS. */
const SIZES = listOfItems(nonNegative());
const SEEDS = seedList();
const CONCURRENCY = listOfItems(integer(1, 100_000));
const PRESETS = listOfItems(oneOf(TAIL_NAMES));
const BATCH_COUNT = integer(1, 100_000);
const aWorkload = parsedText((w) => parseWorkloadArg(w));

// No defaults applied: with --from-json a list not given is what the files hold.
export const TIER_GRID_SPEC = {
  name: "bench:tier-grid",
  summary:
    "tr against default over a grid of host KV tiers × workloads × concurrencies × seeds, plus a fixed batch (makespan, completion p99, first-response spread), as markdown; the last line is the grid's lowest tr ÷ default.",
  runtime:
    "about 40 min with --jobs 2 on an idle 2-core machine, several times that on a busy one (recorded: 107 runs, ~80 CPU-minutes); one line per run on stderr; --quick for a smoke run",
  flags: {
    one: ONE_FLAG,
    sizes: {
      arg: "<list>",
      defaultText: DEFAULTS.sizes,
      description: "host KV tiers per engine, GiB (--kv-offloading-size)",
      check: SIZES,
    },
    workloads: {
      arg: "<list>",
      defaultText: DEFAULTS.workloads,
      description: "workloads, as `maitred simulate --workload` names them",
      check: listOfItems(aWorkload),
    },
    concurrency: {
      arg: "<list>",
      defaultText: DEFAULTS.concurrency,
      description: "programs in flight; the oracle runs at the largest",
      check: CONCURRENCY,
    },
    seeds: {
      arg: "<list>",
      defaultText: DEFAULTS.seeds,
      description: "seeds of the grid",
      check: SEEDS,
    },
    presets: {
      arg: "<list>",
      defaultText: DEFAULTS.presets,
      description:
        "tr's --tail presets, each a point of the throughput/tail frontier beside the engine alone (default) and the oracle; the shipped one (bounded) is the tables' tr",
      check: PRESETS,
    },
    "claude-window": {
      arg: "<warm-up+window>",
      defaultText: DEFAULTS["claude-window"],
      description: "claude-code's warm-up + window (other workloads: 10m+50m)",
      check: windowPair(),
    },
    "batch-sizes": {
      arg: "<list>",
      defaultText: DEFAULTS["batch-sizes"],
      description: "host tiers of the fixed batch",
      check: SIZES,
    },
    "batch-seeds": {
      arg: "<list>",
      defaultText: DEFAULTS["batch-seeds"],
      description: "seeds of the fixed batch",
      check: SEEDS,
    },
    "batch-programs": {
      arg: "<n>",
      defaultText: `${DEFAULTS["batch-programs"]}; --quick ${QUICK_BATCH.programs}`,
      description: "programs in the batch (--programs)",
      check: BATCH_COUNT,
    },
    "batch-concurrency": {
      arg: "<n>",
      defaultText: `${DEFAULTS["batch-concurrency"]}; --quick ${QUICK_BATCH.concurrency}`,
      description: "of them in flight at once",
      check: BATCH_COUNT,
    },
    "batch-workload": {
      arg: "<name>",
      defaultText: DEFAULTS["batch-workload"],
      description: "the batch's workload",
      check: aWorkload,
    },
    "no-batch": { type: "boolean", description: "skip the batch" },
    quick: {
      type: "boolean",
      description:
        "a smoke run, not a measurement: 2m + 8m for every workload whose window is not given, a batch of 32 programs 16 at a time unless the batch flags are given",
    },
    jobs: JOBS_FLAG,
    json: jsonFlag("save every run (its figures and its command)"),
    svg: {
      arg: "<file>",
      description:
        "a chart of tr ÷ default against the tier size, a line per workload and concurrency",
    },
    "from-json": fromJsonFlag(
      "print from saved runs instead of running; a list flag not given takes every value the files hold",
    ),
  },
} satisfies ScriptSpec;

export type TierGridFlags = ScriptArgs<typeof TIER_GRID_SPEC.flags>["values"];

/** One run, in this process (the child's side of `--one`), and its line in the parent. */
export const TIER_GRID_RUNS: RunsOf<TierRun, Result> = {
  runOne: runTier<TierRun>,
  describe: (r) =>
    `${r.spec.workload} ${r.spec.router}${r.spec.tail === undefined ? "" : ` --tail ${r.spec.tail}`} ${r.spec.sizeGiB} GiB C=${r.spec.concurrency} seed ${r.spec.seed}${r.batch === undefined ? `: ${r.stepsPerMin.toFixed(1)} steps/min` : `, batch of ${r.spec.programs}: makespan ${fix(r.batch.makespanS, 0)} s`} (${r.wallS.toFixed(0)} s wall)`,
};

const windowText = (w: RunWindow) =>
  `${span(parseFlag("warmup", duration({ allowZero: true }), w.warmup))} warm-up + ${span(parseFlag("duration", duration(), w.duration))} window`;

/**
 * A list flag: as given, else (with `--from-json`) every value the saved runs hold, sorted,
 * else the default; `present` reads a run's value.
 */
function listFlag<T extends number | string>(
  args: TierGridFlags,
  key: keyof typeof DEFAULTS,
  schema: z.ZodType<T[]>,
  saved: Result[] | undefined,
  present: (r: Result) => T,
): T[] {
  const raw = args[key];
  if (raw === undefined && saved !== undefined) {
    return [...new Set(saved.map(present))].sort((a, b) =>
      typeof a === "number" && typeof b === "number" ? a - b : 0,
    );
  }
  return parseFlag(key, schema, raw ?? DEFAULTS[key]);
}

/** The tables' tr is the shipped preset: a list without it would leave them empty. */
function presetsOf(presets: TailPreset[]): TailPreset[] {
  if (!presets.includes(DEFAULT_TAIL)) {
    throw new ConfigError("--presets", `must include ${DEFAULT_TAIL}, the tables' tr`);
  }
  return presets;
}

/** The grid's axes: the flags, else what the saved runs hold, else the defaults. */
export function listsOf(args: TierGridFlags, saved: Result[] | undefined): Lists {
  const grid = saved?.filter(isGrid);
  const batch = saved?.filter(isBatch);
  const tiered = (rs: Result[] | undefined) => rs?.filter((r) => r.spec.router !== "oracle");
  const size = (r: Result) => r.spec.sizeGiB;
  const seed = (r: Result) => r.spec.seed;
  return {
    sizes: listFlag(args, "sizes", SIZES, tiered(grid), size),
    workloads: listFlag(args, "workloads", list(), grid, (r) => r.spec.workload),
    concurrency: listFlag(args, "concurrency", CONCURRENCY, grid, (r) => r.spec.concurrency),
    seeds: listFlag(args, "seeds", SEEDS, grid, seed),
    presets: presetsOf(listFlag(args, "presets", PRESETS, grid?.filter(isTr), presetOf)),
    batchSizes: listFlag(args, "batch-sizes", SIZES, tiered(batch), size),
    batchSeeds: listFlag(args, "batch-seeds", SEEDS, batch, seed),
  };
}

/**
 * Each workload's window: claude-code's own (`--claude-window`, which wins over `--quick`),
 * else `--quick`'s, else the hour.
 */
export function windowOf(args: TierGridFlags, workload: string): RunWindow {
  const given = args["claude-window"];
  const claude = parseFlag("claude-window", windowPair(), given ?? DEFAULTS["claude-window"]);
  if (workload === "claude-code" && (given !== undefined || !args.quick)) return claude;
  return args.quick ? QUICK_WINDOW : HOUR_WINDOW;
}

/** The batch's runs (none with `--no-batch`), then the grid's, longest windows first. */
export function tierGridRuns(args: TierGridFlags, l: Lists): TierRun[] {
  const top = Math.max(...l.concurrency);
  const grid: TierRun[] = [];
  for (const workload of l.workloads) {
    const window = windowOf(args, workload);
    for (const seed of l.seeds) {
      grid.push({ workload, seed, router: "oracle", sizeGiB: 0, concurrency: top, window });
      for (const sizeGiB of l.sizes) {
        for (const concurrency of l.concurrency) {
          grid.push({ workload, seed, router: "default", sizeGiB, concurrency, window });
          // The shipped preset is named by no flag, as a run of the shipped defaults.
          for (const tail of l.presets) {
            const preset = tail === DEFAULT_TAIL ? {} : { tail };
            grid.push({ workload, seed, router: "tr", sizeGiB, concurrency, window, ...preset });
          }
        }
      }
    }
  }
  // Longest windows first, so the pool does not end on one long run.
  const simMs = (s: TierRun) => {
    const o = tierOptions(s);
    return o.warmupMs + o.durationMs;
  };
  grid.sort((a, b) => simMs(b) - simMs(a));
  if (args["no-batch"]) return grid;
  const workload = args["batch-workload"] ?? DEFAULTS["batch-workload"];
  const pick = (key: "batch-programs" | "batch-concurrency", quick: string) =>
    parseFlag(key, BATCH_COUNT, args[key] ?? (args.quick ? quick : DEFAULTS[key]));
  const programs = pick("batch-programs", QUICK_BATCH.programs);
  const concurrency = pick("batch-concurrency", QUICK_BATCH.concurrency);
  const batch: TierRun[] = [];
  for (const seed of l.batchSeeds) {
    batch.push({ workload, seed, router: "oracle", sizeGiB: 0, concurrency, programs });
    for (const sizeGiB of l.batchSizes) {
      for (const router of ["default", "tr"] as const) {
        batch.push({ workload, seed, router, sizeGiB, concurrency, programs });
      }
    }
  }
  return [...batch, ...grid];
}

/** Runs saved by `--json`; a later file's run of the same cell and router replaces an earlier one's. */
const readResults = (files: string) =>
  readRuns<Result>(files, ({ spec: s }) => [
    s.workload,
    s.seed,
    s.router,
    s.router === "oracle" ? 0 : s.sizeGiB,
    s.concurrency,
    s.programs ?? 0,
    s.tail ?? DEFAULT_TAIL,
  ]);

/**
 * The scorecard: the runs (or the saved ones), `--json` of the runs made, the report, and
 * `--svg`'s chart. Returns the results it reported on.
 */
export async function tierGridScorecard(
  args: TierGridFlags,
  io: SimIo<TierRun, Result>,
): Promise<Result[]> {
  const t0 = performance.now();
  const saved = args["from-json"] === undefined ? undefined : readResults(args["from-json"]);
  const l = listsOf(args, saved);
  let results: Result[];
  if (saved !== undefined) {
    results = saved;
  } else {
    // Bad flags (a workload, a window) fail here, once, rather than in every child.
    const specs = tierGridRuns(args, l);
    const jobs = jobsOf(args.jobs);
    io.note(`# ${specs.length} runs, ${jobs} at a time\n`);
    results = await io.run(specs, jobs);
    io.note(wallLine(results, t0));
    if (args.json !== undefined) writeJson(args.json, results);
  }
  if (l.workloads.length === 0 || l.sizes.length === 0) {
    throw new ConfigError("--from-json", "holds no grid runs");
  }
  const windows = l.workloads.map((w) => {
    const run = results.find((r) => isGrid(r) && r.spec.workload === w && r.spec.window);
    return windowText(run?.spec.window ?? windowOf(args, w));
  });
  io.print(`${tierGridReport(results, l, windows)}\n`);
  if (args.svg !== undefined) writeFileSync(args.svg, tierGridChart(results, l));
  return results;
}
