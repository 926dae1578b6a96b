/**
 * `npm run bench:host-tier`, what a host-memory KV tier changes: per workload and seed a
 * table with a row per host tier size and the default router, tr and the oracle (unbounded KV,
 * the same compute) side by side, on the host-tier scorecards' cluster (../sim-runs.ts
 * `runTier`); its flags, its runs, its tables and its chart.
 */
import { writeFileSync } from "node:fs";
import { listOfItems, nonNegative } from "../../config/values.ts";
import { markdownTable } from "../markdown-table.ts";
import type { ScriptArgs, ScriptSpec } from "../script-args.ts";
import {
  concurrencyFlag,
  fromJsonFlag,
  JOBS_FLAG,
  jsonFlag,
  ONE_FLAG,
  QUICK_FLAG,
  seedsFlag,
  workloadFlag,
} from "../script-flags.ts";
import {
  HOUR_WINDOW,
  jobsOf,
  QUICK_WINDOW,
  type RunWindow,
  readRuns,
  runTier,
  type TierResult,
  type TierRun,
} from "../sim-runs.ts";
import { lineChart } from "../svg-chart.ts";
import { findRun, fix, mega, type RunsOf, type SimIo, writeJson } from "./scorecard.ts";

const ROUTERS = ["default", "tr", "oracle"] as const;
type Router = (typeof ROUTERS)[number];

export interface HostTierRun extends TierRun {
  router: Router;
  window: RunWindow;
}

export type HostTierResult = TierResult<HostTierRun>;

export const HOST_TIER_SPEC = {
  name: "bench:host-tier",
  summary:
    "What a host-memory KV tier changes: per host tier size, default, tr and the oracle side by side (steps/min, ratios, step p99, prefilled and host-loaded tokens), as markdown.",
  runtime:
    "about 15 min on 2 cores (recorded: 26 runs); one line per run on stderr; scales with --seeds × (2 × --sizes + 1)",
  flags: {
    one: ONE_FLAG,
    sizes: {
      arg: "<list>",
      default: "0,25,50,100,200,400",
      description: "host KV tier per engine, GiB (--kv-offloading-size), a row each",
      check: listOfItems(nonNegative()),
    },
    seeds: seedsFlag("7,1", "seeds, a table each"),
    workload: workloadFlag(),
    concurrency: concurrencyFlag("128", "programs in flight", { max: 4096 }),
    quick: QUICK_FLAG,
    jobs: JOBS_FLAG,
    json: jsonFlag(),
    svg: { arg: "<file>", description: "draw steps/min against the tier size" },
    "from-json": fromJsonFlag(
      "print from earlier runs' --json instead of running (a later file's run replaces an earlier one's)",
    ),
  },
} satisfies ScriptSpec;

export type HostTierArgs = ScriptArgs<typeof HOST_TIER_SPEC.flags>;

/** The hour the window covers, as the flags give it: 10 min warm-up, then a full hour. */
const WINDOW: RunWindow = { warmup: HOUR_WINDOW.warmup, duration: "60m" };

/** One run, in this process (the child's side of `--one`), and its line in the parent. */
export const HOST_TIER_RUNS: RunsOf<HostTierRun, HostTierResult> = {
  runOne: runTier<HostTierRun>,
  describe: (r) =>
    `${r.spec.router} ${r.spec.sizeGiB} GiB seed ${r.spec.seed}: ${r.stepsPerMin.toFixed(1)} steps/min (${r.wallS.toFixed(0)} s wall)`,
};

/** Per seed, the oracle once (it has no tier), then default and tr at every size. */
export function hostTierRuns(args: HostTierArgs): HostTierRun[] {
  const { sizes, seeds, concurrency } = args.parsed;
  const window = args.values.quick ? QUICK_WINDOW : WINDOW;
  const workload = args.values.workload;
  return seeds.flatMap((seed): HostTierRun[] => [
    { workload, seed, router: "oracle", sizeGiB: 0, concurrency, window },
    ...sizes.flatMap((sizeGiB) =>
      (["default", "tr"] as const).map((router) => ({
        workload,
        seed,
        router,
        sizeGiB,
        concurrency,
        window,
      })),
    ),
  ]);
}

const finder =
  (results: readonly HostTierResult[], workload: string, seed: number) =>
  (router: Router, size: number) =>
    findRun(
      results,
      ({ spec: s }) =>
        s.workload === workload &&
        s.seed === seed &&
        s.router === router &&
        (router === "oracle" || s.sizeGiB === size),
      `${workload} seed ${seed} ${router} ${size} GiB`,
    );

/** One seed's table, under the oracle's figures, with the command of its runs. */
export function hostTierTable(
  results: readonly HostTierResult[],
  workload: string,
  seed: number,
  sizes: readonly number[],
): string {
  const find = finder(results, workload, seed);
  const oracle = find("oracle", 0);
  const rows = sizes.map((size) => {
    const d = find("default", size);
    const t = find("tr", size);
    return [
      `${size} GiB`,
      d.stepsPerMin.toFixed(1),
      t.stepsPerMin.toFixed(1),
      (t.stepsPerMin / d.stepsPerMin).toFixed(2),
      (t.stepsPerMin / oracle.stepsPerMin).toFixed(2),
      (d.stepsPerMin / oracle.stepsPerMin).toFixed(2),
      fix(d.stepP99S, 0),
      fix(t.stepP99S, 0),
      t.longestWaitS.toFixed(0),
      `${mega(d.prefilled)} / ${mega(t.prefilled)}`,
      `${mega(d.hostLoaded)} / ${mega(t.hostLoaded)}`,
    ];
  });
  return [
    `### ${workload}, seed ${seed}: oracle ${oracle.stepsPerMin.toFixed(1)} steps/min, step p99 ${fix(oracle.stepP99S, 0)} s, ${mega(oracle.prefilled)} M prompt tokens prefilled`,
    "",
    markdownTable(
      [
        "host tier per engine",
        "default steps/min",
        "tr steps/min",
        "tr ÷ default",
        "tr ÷ oracle",
        "default ÷ oracle",
        "default step p99 (s)",
        "tr step p99 (s)",
        "tr longest wait (s)",
        "prefilled M (default / tr)",
        "host loads M (default / tr)",
      ],
      rows,
      0,
    ),
    "",
    `Commands: \`${find("tr", sizes[sizes.length - 1]).command}\`, and the same with \`--router default\`, \`--router oracle\` and each \`--kv-offloading-size\`.`,
  ].join("\n");
}

const COLOURS: Record<Router, string> = { default: "#7f8c8d", tr: "#2f5fb3", oracle: "#1a7f37" };

/**
 * Steps/min against the host tier's size, the mean over the seeds: a line per router (the
 * oracle has no tier: a level line), sizes evenly spaced. Self-contained SVG with its legend.
 */
export function hostTierChart(
  results: readonly HostTierResult[],
  workload: string,
  seeds: readonly number[],
  sizes: readonly number[],
): string {
  const mean = (router: Router, size: number) => {
    const runs = results.filter(
      (r) =>
        r.spec.workload === workload &&
        seeds.includes(r.spec.seed) &&
        r.spec.router === router &&
        (router === "oracle" || r.spec.sizeGiB === size),
    );
    return runs.reduce((a, r) => a + r.stepsPerMin, 0) / runs.length;
  };
  return lineChart({
    title: `${workload}, ${results[0]?.spec.concurrency ?? ""} programs: steps/min (mean of seeds ${seeds.join(", ")})`,
    xLabel: "host KV tier per engine (GiB)",
    xs: [...sizes],
    yStep: 50,
    series: ROUTERS.map((router) => ({
      label: router === "oracle" ? "oracle (no tier)" : router,
      colour: COLOURS[router],
      ys: sizes.map((size) => mean(router, size)),
      dashed: router === "oracle",
    })),
  });
}

/** The results of earlier `--json` files; a later file's run replaces an earlier one's. */
const readResults = (files: string) =>
  readRuns<HostTierResult>(files, ({ spec: { workload, seed, router, sizeGiB } }) => [
    workload,
    seed,
    router,
    router === "oracle" ? 0 : sizeGiB,
  ]);

/**
 * The scorecard: the runs (or `--from-json`'s), a table per seed, and with `--json` and
 * `--svg` the runs and the chart. Returns the runs.
 */
export async function hostTierScorecard(
  args: HostTierArgs,
  io: SimIo<HostTierRun, HostTierResult>,
): Promise<HostTierResult[]> {
  const { sizes, seeds } = args.parsed;
  const { workload, json, svg } = args.values;
  const specs = hostTierRuns(args);
  const from = args.values["from-json"];
  const results =
    from !== undefined ? readResults(from) : await io.run(specs, jobsOf(args.values.jobs));
  const out = seeds.map((seed) => hostTierTable(results, workload, seed, sizes));
  io.print(`${out.join("\n\n")}\n`);
  if (json !== undefined) writeJson(json, results);
  if (svg !== undefined) writeFileSync(svg, hostTierChart(results, workload, seeds, sizes));
  return results;
}
