/**
 * What a host-memory KV tier changes, measured: per workload and seed one markdown table with
 * a row per host tier size (GiB per engine, `--kv-offloading-size`) and the default router, tr
 * and the oracle (unbounded KV, the same compute) side by side: steps/min and their ratios,
 * tr's step latency tail, and the prompt tokens each router prefilled again or loaded back from
 * host memory. The cluster is the scorecard's: 2 × llama-3.1-8b-h100 with 26,000 KV blocks each
 * (≈ 52 GiB of KV), shipped defaults (the `bounded` tail), 10 min warm-up + 60 min window.
 *
 * Every figure is measured by the runs this invocation makes, one child process per run,
 * `--jobs` at a time (default: one per core); the wall time of each goes to stderr.
 *
 *   node_modules/.bin/node scripts/bench-host-tier.ts [--sizes 0,25,50,100,200,400]
 *     [--seeds 7,1] [--workload deepseek] [--concurrency 128] [--quick] [--jobs 2]
 *     [--json out.json] [--svg chart.svg]
 *
 * `--from-json a.json[,b.json]` prints the tables and draws the chart from the `--json` of
 * earlier invocations instead of running (a later file's run replaces an earlier one's of the
 * same workload, seed, router and size), so a re-run of some sizes joins the rest.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { markdownTable } from "../src/bench/markdown-table.ts";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { scriptArgs } from "../src/bench/script-entry.ts";
import {
  concurrencyFlag,
  fromJsonFlag,
  JOBS_FLAG,
  jsonFlag,
  ONE_FLAG,
  QUICK_FLAG,
  seedsFlag,
  workloadFlag,
} from "../src/bench/script-flags.ts";
import {
  benchEntry,
  HOUR_WINDOW,
  jobsOf,
  QUICK_WINDOW,
  type RunWindow,
  readRuns,
  runInChildren,
  runTier,
  type TierResult,
  type TierRun,
} from "../src/bench/sim-runs.ts";
import { lineChart } from "../src/bench/svg-chart.ts";
import { listOfItems, nonNegative } from "../src/config/values.ts";

const ROUTERS = ["default", "tr", "oracle"] as const;
type Router = (typeof ROUTERS)[number];

interface RunSpec extends TierRun {
  router: Router;
  window: RunWindow;
}

type RunResult = TierResult<RunSpec>;

const SPEC = {
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
const { values: args, parsed } = scriptArgs(SPEC);
/** The hour the window covers, as the flags give it (an hour: the figures). */
const WINDOW: RunWindow = { warmup: HOUR_WINDOW.warmup, duration: "60m" };

const fix = (v: number | null, d: number) => (v === null ? "–" : v.toFixed(d));
const mega = (v: number) => (v / 1e6).toFixed(1);

function table(results: RunResult[], workload: string, seed: number, sizes: number[]): string {
  const find = (router: Router, size: number) =>
    results.find(
      (r) =>
        r.spec.workload === workload &&
        r.spec.seed === seed &&
        r.spec.router === router &&
        (router === "oracle" || r.spec.sizeGiB === size),
    ) as RunResult;
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
  const lines = [
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
  ];
  lines.push(
    "",
    `Commands: \`${find("tr", sizes[sizes.length - 1]).command}\`, and the same with \`--router default\`, \`--router oracle\` and each \`--kv-offloading-size\`.`,
  );
  return lines.join("\n");
}

const COLOURS: Record<Router, string> = { default: "#7f8c8d", tr: "#2f5fb3", oracle: "#1a7f37" };

/**
 * Steps/min against the host tier's size, the mean over the seeds: a line per router (the
 * oracle has no tier: a level line), sizes evenly spaced. Self-contained SVG with its legend.
 */
function chart(results: RunResult[], workload: string, seeds: number[], sizes: number[]): string {
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
    xs: sizes,
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
  readRuns<RunResult>(files, ({ spec: { workload, seed, router, sizeGiB } }) => [
    workload,
    seed,
    router,
    router === "oracle" ? 0 : sizeGiB,
  ]);

async function main(): Promise<void> {
  const { sizes, seeds, concurrency } = parsed;
  const window = args.quick ? QUICK_WINDOW : WINDOW;
  const workload = args.workload;
  const specs: RunSpec[] = [];
  for (const seed of seeds) {
    specs.push({ workload, seed, router: "oracle", sizeGiB: 0, concurrency, window });
    for (const sizeGiB of sizes) {
      for (const router of ["default", "tr"] as const) {
        specs.push({ workload, seed, router, sizeGiB, concurrency, window });
      }
    }
  }
  const script = fileURLToPath(import.meta.url);
  const results =
    args["from-json"] !== undefined
      ? readResults(args["from-json"])
      : await runInChildren<RunSpec, RunResult>(
          script,
          specs,
          jobsOf(args.jobs),
          (r) =>
            `${r.spec.router} ${r.spec.sizeGiB} GiB seed ${r.spec.seed}: ${r.stepsPerMin.toFixed(1)} steps/min (${r.wallS.toFixed(0)} s wall)`,
        );
  const out = seeds.map((seed) => table(results, workload, seed, sizes));
  process.stdout.write(`${out.join("\n\n")}\n`);
  if (args.json !== undefined) writeFileSync(args.json, `${JSON.stringify(results, null, 2)}\n`);
  if (args.svg !== undefined) writeFileSync(args.svg, chart(results, workload, seeds, sizes));
}

await benchEntry("bench:host-tier", args.one, runTier<RunSpec>, main);
