/**
 * `npm run bench:agreement`: do the simulator's figures hold over HTTP? One configuration runs
 * twice, default and tr each time, and tr ÷ default is compared:
 *
 *   1. over HTTP: `bench compare`'s simulated backends, routers and workload driver, talking
 *      over loopback sockets, in this process on one virtual clock (src/runtime/clock.ts), so
 *      the engines keep the timing profile's rates however busy the machine is;
 *   2. in `simulate`: the same core, engines and workload in the simulator's virtual time.
 *
 * The two share the workload, its seed, the engines' profile and KV size and the routers'
 * defaults; the ratios should agree within 15 %. Without --num-gpu-blocks the engines have
 * their profile's KV size, as `simulate` does.
 */
import { createVirtualClock } from "../../runtime/clock.ts";
import { resolveSimulateFlags } from "../../simulate/simulate-options.ts";
import { simulateSweep } from "../../simulate/simulate-sweep.ts";
import { loadWorkload } from "../../workload/load-workload.ts";
import { resolveCompareFlags } from "../bench-options.ts";
import { runCompare } from "../compare.ts";
import { markdownTable } from "../markdown-table.ts";
import type { ScriptArgs, ScriptSpec } from "../script-args.ts";
import {
  backendsFlag,
  concurrencyFlag,
  durationFlag,
  jsonFlag,
  seedFlag,
  simBlocksFlag,
  warmupFlag,
  workloadFlag,
} from "../script-flags.ts";
import { inProcessStarters } from "../start-router-for.ts";

/** How far the two ratios may differ before the simulator's figure is not believed. */
export const AGREEMENT = 0.15;

export const AGREEMENT_SPEC = {
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

/** The script's flags as read: passed on as written to both sides. */
export type AgreementArgs = ScriptArgs<(typeof AGREEMENT_SPEC)["flags"]>["values"];

/** tr's and default's steps/min on one side. */
export interface Side {
  default: number;
  tr: number;
}

/** default's and tr's steps/min among a comparison's runs (NaN for a router not run). */
export function sideOf(runs: readonly { router: string; steps_per_min: number }[]): Side {
  const spm = (mode: string) => runs.find((r) => r.router === mode)?.steps_per_min ?? Number.NaN;
  return { default: spm("default"), tr: spm("tr") };
}

/** Both routers over loopback HTTP, every part in this process on one virtual clock. */
export async function agreementOverHttp(a: AgreementArgs): Promise<Side> {
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
    return sideOf(await runCompare({ ...o, clock, ...inProcessStarters(clock) }));
  } finally {
    clock.stop();
  }
}

/** The `maitred simulate` flags of the same configuration, as its command reads them. */
export function simulateFlags(a: AgreementArgs): Record<string, string> {
  return {
    router: "default,tr",
    workload: a.workload,
    concurrency: a.concurrency,
    numBackends: a.backends,
    ...(a["num-gpu-blocks"] === undefined ? {} : { numGpuBlocks: a["num-gpu-blocks"] }),
    warmup: a.warmup,
    duration: a.duration,
    seed: a.seed,
  };
}

/**
 * Both routers in the simulator, as `maitred simulate` runs them: its flags resolved by its
 * own reader, its workload, its sweep (the bench sits below the CLI, so not through it).
 */
export async function agreementInSimulate(a: AgreementArgs): Promise<Side> {
  const o = resolveSimulateFlags(simulateFlags(a));
  return sideOf(simulateSweep(o, await loadWorkload(o.workload)));
}

export interface Agreement {
  http: Side;
  simulate: Side;
  /** How far over HTTP's tr ÷ default is from simulate's, as a fraction of simulate's. */
  gap: number;
  httpWallMs: number;
  simulateWallMs: number;
}

/** simulate first (it is quick), then over HTTP; `progress` hears each as it starts. */
export async function runAgreement(
  a: AgreementArgs,
  progress: (line: string) => void = () => {},
): Promise<Agreement> {
  const t0 = performance.now();
  progress("1/2: default and tr in maitred simulate");
  const simulate = await agreementInSimulate(a);
  const t1 = performance.now();
  progress(
    `2/2: default and tr over HTTP on a virtual clock (simulate took ${((t1 - t0) / 1000).toFixed(0)} s)`,
  );
  const http = await agreementOverHttp(a);
  const t2 = performance.now();
  return {
    http,
    simulate,
    gap: gapOf(http, simulate),
    httpWallMs: t2 - t1,
    simulateWallMs: t1 - t0,
  };
}

const ratio = (s: Side) => s.tr / s.default;

export const gapOf = (http: Side, simulate: Side) => ratio(http) / ratio(simulate) - 1;

/** What the script prints: the configuration, both sides in a table, and the verdict. */
export function agreementLines(a: AgreementArgs, r: Agreement): string[] {
  const f = (x: number, d = 1) => x.toFixed(d);
  const row = (name: string, s: Side, ms: number) => [
    name,
    f(s.default),
    f(s.tr),
    f(ratio(s), 2),
    `${f(ms / 1000, 0)} s`,
  ];
  return [
    `tr ÷ default over HTTP and in simulate: ${a.workload}, ${a.concurrency} programs, ${a.backends} backends × ${a["num-gpu-blocks"] ?? "the profile's"} blocks, warm-up ${a.warmup}, window ${a.duration}, seed ${a.seed}`,
    markdownTable(
      ["", "default steps/min", "tr steps/min", "tr ÷ default", "wall time"],
      [
        row("over HTTP (virtual clock)", r.http, r.httpWallMs),
        row("simulate", r.simulate, r.simulateWallMs),
      ],
    ),
    `ratios differ by ${f(r.gap * 100)} % (agreement within ${AGREEMENT * 100} %: ${Math.abs(r.gap) <= AGREEMENT ? "yes" : "NO"})`,
  ];
}

/** What `--json` writes: the flags as given, both sides and the gap. */
export const agreementJson = (a: AgreementArgs, r: Agreement) =>
  `${JSON.stringify({ args: a, http: r.http, simulate: r.simulate, gap: r.gap }, null, 2)}\n`;
