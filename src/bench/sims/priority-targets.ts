/**
 * `npm run bench:priority`, the targets for priority classes measured in the simulator at
 * overload: per seed the same workload and engines with priorities off, then on, in this
 * process. Targets, per seed: interactive TTFT p95 (on) ≤ 0.25 × off; total steps/min (on)
 * ≥ 0.95 × off; no class starves (the longest bulk wait within bulk's starvation threshold
 * and one scheduler tick, and no bulk 408).
 */
import { performance } from "node:perf_hooks";
import { ROUTER_SETTINGS } from "../../config/router-config.ts";
import { settingOf } from "../../config/setting.ts";
import { parsedText } from "../../config/values.ts";
import type { PriorityConfig, SchedulerConfig } from "../../core/api.ts";
import { resolveSimulateFlags, SIMULATE_SETTINGS } from "../../simulate/simulate-options.ts";
import type { SimulateRunReport } from "../../simulate/simulate-report.ts";
import { simulateSweep } from "../../simulate/simulate-sweep.ts";
import { loadWorkload } from "../../workload/load-workload.ts";
import { mean } from "../percentile.ts";
import type { ScriptArgs, ScriptSpec } from "../script-args.ts";
import { durationFlag, jsonFlag, seedsFlag, warmupFlag, workloadFlag } from "../script-flags.ts";
import { fix, type Out, writeJson } from "./scorecard.ts";

export const PRIORITY_SPEC = {
  name: "bench:priority",
  summary:
    "The targets for priority classes at overload, in the simulator: tr with priorities off, then on, per seed; interactive TTFT p95, total steps/min and the longest bulk wait, each pass/fail.",
  runtime:
    "not timed; 6 runs of one simulated hour (off and on per seed), one after another, a line each on stderr; scales with --seeds × (--warmup + --duration)",
  flags: {
    seeds: seedsFlag("1,2,3", "seeds, a pair of runs each"),
    concurrency: {
      arg: "<n>",
      default: "128",
      description: "program slots",
      check: SIMULATE_SETTINGS.concurrency.schema,
    },
    workload: workloadFlag({
      arg: "<mix>",
      default: "mix:chat@interactive=0.2,deepseek@bulk=0.8",
    }),
    warmup: warmupFlag({ default: "10m" }),
    duration: durationFlag({ default: "50m" }),
    classes: {
      arg: "<json>",
      defaultText: "the built-in class defaults",
      description: `class settings for experiments, e.g. '{"bulk":{"starvationMs":600000}}'`,
      check: parsedText((t) => JSON.parse(t) as unknown),
    },
    "queue-policy": {
      arg: "<policy>",
      defaultText: "maitred serve's (ta)",
      description: "order within a class with priorities on, as `maitred serve --queue-policy`",
      check: settingOf(ROUTER_SETTINGS, "queue-policy", "maitred serve").schema,
    },
    json: jsonFlag("also write the runs as JSON"),
  },
} satisfies ScriptSpec;

export type PriorityArgs = ScriptArgs<typeof PRIORITY_SPEC.flags>;

/** The targets for priority classes. */
const TTFT_RATIO_MAX = 0.25;
const THROUGHPUT_RATIO_MIN = 0.95;

/** A seed's two runs: priorities off, then on. */
export interface Pair {
  seed: number;
  off: SimulateRunReport;
  on: SimulateRunReport;
  wallS: number;
}

/** One run of tr on the flags' workload, priorities off or on (with `--classes` on top). */
async function run(
  args: PriorityArgs,
  seed: number,
  priority: boolean,
): Promise<{ report: SimulateRunReport; wallS: number }> {
  const v = args.values;
  const o = resolveSimulateFlags({
    router: "tr",
    workload: v.workload,
    concurrency: v.concurrency,
    warmup: v.warmup,
    duration: v.duration,
    seed: String(seed),
    ...(priority ? { priority: true } : {}),
    ...(priority && v["queue-policy"] ? { queuePolicy: v["queue-policy"] } : {}),
  });
  const knobs: Omit<SchedulerConfig, "mode"> = { ...o.knobs };
  if (priority && v.classes !== undefined) {
    const classes = JSON.parse(v.classes) as PriorityConfig["classes"];
    knobs.priority = { ...knobs.priority, classes };
  }
  const workload = await loadWorkload(o.workload);
  const t0 = performance.now();
  const [report] = simulateSweep({ ...o, knobs, concurrency: [o.concurrency[0]] }, workload);
  return { report, wallS: (performance.now() - t0) / 1000 };
}

const f = (v: number | null | undefined, d = 1) => fix(v, d, "-");
const pass = (ok: boolean) => (ok ? "PASS" : "FAIL");

/** A class's longest wait in the run: dispatched after parking, or still parked at the end. */
export function longestWait(r: SimulateRunReport, cls: "bulk" | "interactive"): number {
  const core = r.priority?.classes[cls];
  const steps = r.classes[cls]?.queue_wait_ms.max ?? 0;
  return Math.max(steps, core?.queue_wait_ms.max ?? 0, core?.still_waiting_max_ms ?? 0);
}

/** A run's figures, per class and for the core. */
export function describe(label: string, r: SimulateRunReport): string {
  const i = r.classes.interactive;
  const b = r.classes.bulk;
  const pr = r.priority?.classes;
  const engine = r.backends.reduce((a, x) => a + x.preemptions, 0);
  return [
    `  ${label}: ${f(r.steps_per_min)} steps/min (interactive ${f(i?.steps_per_min)}, bulk ${f(b?.steps_per_min)})`,
    `    interactive TTFT p50/p95/p99 ${f(i?.ttft_ms.p50, 0)}/${f(i?.ttft_ms.p95, 0)}/${f(i?.ttft_ms.p99, 0)} ms, step p95 ${f(i?.step_latency_ms.p95, 0)} ms, longest wait ${f(longestWait(r, "interactive") / 1000)} s, errors ${JSON.stringify(i?.errors ?? {})}`,
    `    bulk TTFT p50/p95/p99 ${f(b?.ttft_ms.p50, 0)}/${f(b?.ttft_ms.p95, 0)}/${f(b?.ttft_ms.p99, 0)} ms, step p95 ${f(b?.step_latency_ms.p95, 0)} ms, longest wait ${f(longestWait(r, "bulk") / 1000)} s, errors ${JSON.stringify(b?.errors ?? {})}`,
    `    core: pauses ${r.scheduler.pauses}, marks ${r.scheduler.marks}, resumes ${r.scheduler.resumes}, forced ${r.scheduler.forcedResumes}; engine preemptions ${engine}; cache hit ${f((r.prompt_tokens.cache_hit_rate ?? 0) * 100)}%` +
      (pr === undefined
        ? ""
        : `; preemption victims bulk ${pr.bulk.preemptions}, promotions interactive ${pr.interactive.promotions} bulk ${pr.bulk.promotions}, 408 interactive ${pr.interactive.admissions.queue_timeout} bulk ${pr.bulk.admissions.queue_timeout}`),
  ].join("\n");
}

/** A seed's section: both runs' figures, then each target with its verdict. */
export function judge(p: Pair): { text: string; pass: boolean } {
  const { off, on } = p;
  const ttftOff = off.classes.interactive?.ttft_ms.p95 ?? null;
  const ttftOn = on.classes.interactive?.ttft_ms.p95 ?? null;
  const ttftRatio = ttftOff && ttftOn !== null ? ttftOn / ttftOff : null;
  const tputRatio = on.steps_per_min / off.steps_per_min;
  const bulk = on.priority?.classes.bulk;
  const bound = (bulk?.settings.starvation_ms ?? 0) + on.simulated.scheduler_interval_ms;
  const bulkWait = longestWait(on, "bulk");
  const bulk408 = bulk?.admissions.queue_timeout ?? 0;
  const t1 = ttftRatio !== null && ttftRatio <= TTFT_RATIO_MAX;
  const t2 = tputRatio >= THROUGHPUT_RATIO_MIN;
  const t3 = bulk !== undefined && bulkWait <= bound && bulk408 === 0;
  // The empty last line ends the section with a newline.
  const text = [
    `seed ${p.seed} (${p.wallS.toFixed(1)} s wall)`,
    describe("priorities off", off),
    describe("priorities on ", on),
    `  target 1 interactive TTFT p95: ${f(ttftOn, 0)} / ${f(ttftOff, 0)} ms = ${f(ttftRatio, 3)} (≤ ${TTFT_RATIO_MAX}) ${pass(t1)}`,
    `  target 2 steps/min: ${f(on.steps_per_min)} / ${f(off.steps_per_min)} = ${f(tputRatio, 3)} (≥ ${THROUGHPUT_RATIO_MIN}) ${pass(t2)}`,
    `  target 3 longest bulk wait: ${f(bulkWait / 1000)} s (≤ ${f(bound / 1000)} s), bulk 408s ${bulk408} ${pass(t3)}`,
    "",
  ].join("\n");
  return { text, pass: t1 && t2 && t3 };
}

/** The closing line: the ratios' means over the seeds and whether every target passed. */
export function meanLine(pairs: readonly Pair[], allPass: boolean): string {
  const ttft = mean(
    pairs.map(
      (p) =>
        (p.on.classes.interactive?.ttft_ms.p95 ?? 0) /
        (p.off.classes.interactive?.ttft_ms.p95 ?? 1),
    ),
  );
  const tput = mean(pairs.map((p) => p.on.steps_per_min / p.off.steps_per_min));
  return `mean over seeds ${pairs.map((p) => p.seed).join(",")}: TTFT ratio ${f(ttft, 3)}, steps/min ratio ${f(tput, 3)}; all targets ${pass(allPass)}\n`;
}

/**
 * The benchmark: per seed priorities off then on (progress on stderr), the seed's section,
 * then the closing line; `--json` gets the runs without their time series. Returns the pairs.
 */
export async function priorityTargets(args: PriorityArgs, out: Out): Promise<Pair[]> {
  const seeds = args.values.seeds.split(",").map(Number);
  const pairs: Pair[] = [];
  let allPass = true;
  for (const [i, seed] of seeds.entries()) {
    out.note(`# run ${2 * i + 1}/${2 * seeds.length}: seed ${seed}, priorities off\n`);
    const off = await run(args, seed, false);
    out.note(`# run ${2 * i + 2}/${2 * seeds.length}: seed ${seed}, priorities on\n`);
    const on = await run(args, seed, true);
    const pair = { seed, off: off.report, on: on.report, wallS: off.wallS + on.wallS };
    pairs.push(pair);
    const verdict = judge(pair);
    allPass &&= verdict.pass;
    out.print(verdict.text);
  }
  out.print(meanLine(pairs, allPass));
  if (args.values.json) {
    const runs = pairs.flatMap((p) => [
      { seed: p.seed, priority: false, report: { ...p.off, series: undefined } },
      { seed: p.seed, priority: true, report: { ...p.on, series: undefined } },
    ]);
    writeJson(args.values.json, { runs });
  }
  return pairs;
}
