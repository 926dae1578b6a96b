/**
 * Do the simulator's figures hold over HTTP? Runs one configuration twice, default and tr each
 * time, and prints tr ÷ default side by side:
 *
 *   1. over HTTP: `bench compare`'s simulated backends, routers and workload driver, talking
 *      over loopback sockets, in this process on one virtual clock (src/runtime/clock.ts), so
 *      the engines keep the timing profile's rates however busy the machine is;
 *   2. in `simulate`: the same core, engines and workload in the simulator's virtual time.
 *
 * The two share the workload, its seed, the engines' profile and KV size and the routers'
 * defaults; the ratios should agree within 15 %.
 *
 *   node scripts/bench-agreement.ts [--workload deepseek] [--concurrency 32] [--backends 2]
 *       [--num-gpu-blocks <n>] [--warmup 1m] [--duration 5m] [--seed 1] [--json out.json]
 *
 * Without --num-gpu-blocks the engines have their profile's KV size, as `simulate` does.
 */
import { writeFileSync } from "node:fs";
import { resolveCompareFlags } from "../src/bench/bench-options.ts";
import { runCompare } from "../src/bench/compare.ts";
import { markdownTable } from "../src/bench/markdown-table.ts";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { progress, scriptArgs } from "../src/bench/script-entry.ts";
import {
  backendsFlag,
  concurrencyFlag,
  durationFlag,
  jsonFlag,
  seedFlag,
  simBlocksFlag,
  warmupFlag,
  workloadFlag,
} from "../src/bench/script-flags.ts";
import { inProcessStarters } from "../src/bench/start-router-for.ts";
import { runCli } from "../src/cli/run-cli.ts";
import { createVirtualClock } from "../src/runtime/clock.ts";

/** How far the two ratios may differ before the simulator's figure is not believed. */
const AGREEMENT = 0.15;

const SPEC = {
  name: "bench:agreement",
  summary:
    "Do the simulator's figures hold over HTTP? tr ÷ default steps/min over loopback HTTP (on a virtual clock) and in `maitred simulate`, side by side; they should agree within 15 %.",
  runtime:
    "about a minute (recorded: 189 s for 128 programs over 20 simulated minutes; the default is 32 programs over 6); scales with --concurrency × (--warmup + --duration)",
  flags: {
    workload: workloadFlag(),
    concurrency: concurrencyFlag("32", "programs in flight"),
    backends: backendsFlag("2", "simulated backends"),
    "num-gpu-blocks": simBlocksFlag({ defaultText: "the profile's" }, "KV blocks per backend"),
    warmup: warmupFlag({ default: "1m" }),
    duration: durationFlag({ default: "5m" }),
    seed: seedFlag("seeds the workload and the engines"),
    json: jsonFlag("also write both sides as JSON"),
  },
} satisfies ScriptSpec;
const { values: a } = scriptArgs(SPEC);

interface Side {
  default: number;
  tr: number;
}

async function overHttp(): Promise<Side> {
  const clock = createVirtualClock();
  try {
    const o = resolveCompareFlags({
      workload: a.workload,
      concurrency: a.concurrency,
      timeScale: "1",
      warmup: a.warmup,
      duration: a.duration,
      seed: a.seed,
      numBackends: a.backends,
      numGpuBlocks: a["num-gpu-blocks"],
      modes: "default,tr",
      progress: false,
    });
    const runs = await runCompare({ ...o, clock, ...inProcessStarters(clock) });
    const spm = (mode: string) => runs.find((r) => r.router === mode)?.steps_per_min ?? Number.NaN;
    return { default: spm("default"), tr: spm("tr") };
  } finally {
    clock.stop();
  }
}

async function inSimulate(): Promise<Side> {
  const out = `/tmp/maitred-agreement-${process.pid}.json`;
  let stderr = "";
  const code = await runCli(
    [
      "simulate",
      "--router",
      "default,tr",
      "--workload",
      a.workload as string,
      "--concurrency",
      a.concurrency as string,
      "--num-backends",
      a.backends as string,
      ...(a["num-gpu-blocks"] === undefined ? [] : ["--num-gpu-blocks", a["num-gpu-blocks"]]),
      "--warmup",
      a.warmup as string,
      "--duration",
      a.duration as string,
      "--seed",
      a.seed as string,
      "--json",
      out,
    ],
    {
      stdout: () => {},
      stderr: (t) => {
        stderr += t;
      },
      env: process.env,
    },
  );
  if (code !== 0) throw new Error(`simulate failed (${code}): ${stderr}`);
  const { runs } = (await import(out, { with: { type: "json" } })).default as {
    runs: { router: string; steps_per_min: number }[];
  };
  const spm = (r: string) => runs.find((x) => x.router === r)?.steps_per_min ?? Number.NaN;
  return { default: spm("default"), tr: spm("tr") };
}

const t0 = performance.now();
progress("1/2: default and tr in maitred simulate");
const sim = await inSimulate();
const t1 = performance.now();
progress(
  `2/2: default and tr over HTTP on a virtual clock (simulate took ${((t1 - t0) / 1000).toFixed(0)} s)`,
);
const http = await overHttp();
const t2 = performance.now();

const ratio = (s: Side) => s.tr / s.default;
const gap = ratio(http) / ratio(sim) - 1;
const f = (x: number, d = 1) => x.toFixed(d);
console.log(
  `tr ÷ default over HTTP and in simulate: ${a.workload}, ${a.concurrency} programs, ${a.backends} backends × ${a["num-gpu-blocks"] ?? "the profile's"} blocks, warm-up ${a.warmup}, window ${a.duration}, seed ${a.seed}`,
);
console.log(
  markdownTable(
    ["", "default steps/min", "tr steps/min", "tr ÷ default", "wall time"],
    [
      [
        "over HTTP (virtual clock)",
        f(http.default),
        f(http.tr),
        f(ratio(http), 2),
        `${f((t2 - t1) / 1000, 0)} s`,
      ],
      ["simulate", f(sim.default), f(sim.tr), f(ratio(sim), 2), `${f((t1 - t0) / 1000, 0)} s`],
    ],
  ),
);
console.log(
  `ratios differ by ${f(gap * 100)} % (agreement within ${AGREEMENT * 100} %: ${Math.abs(gap) <= AGREEMENT ? "yes" : "NO"})`,
);
if (a.json)
  writeFileSync(a.json, `${JSON.stringify({ args: a, http, simulate: sim, gap }, null, 2)}\n`);
