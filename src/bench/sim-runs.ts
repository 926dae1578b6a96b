/**
 * What the simulation scorecards (bench-tr, bench-tail, bench-host-tier, bench-tier-grid)
 * share: one simulated run timed in this process, a pool that runs a script's runs in child
 * processes `--jobs` at a time (a run is single-threaded, so one per core is the most that
 * helps), and the entry that makes a script both the parent and, given `--one SPEC`, the child
 * that does one run and prints its result as JSON on stdout; and for the host-tier scorecards,
 * one run on the scorecard's cluster given as `maitred simulate` flags, the figures they read
 * from it, and the runs saved by earlier invocations.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { performance } from "node:perf_hooks";
import { camel, parseFlag } from "../config/setting.ts";
import { integer } from "../config/values.ts";
import type { TailPreset } from "../core/scheduler-config.ts";
import { ConfigError } from "../errors.ts";
import type { SimRouter } from "../simulate/run-simulation.ts";
import { resolveSimulateFlags, type SimulateOptions } from "../simulate/simulate-options.ts";
import type { SimulateRunReport } from "../simulate/simulate-report.ts";
import { simulateSweep } from "../simulate/simulate-sweep.ts";
import { loadWorkload } from "../workload/load-workload.ts";

/**
 * The one run `o` names (a single router and concurrency), with its wall time; loading the
 * workload is not counted, so the wall time is the simulation's own.
 */
export async function simulateOnce(
  o: SimulateOptions,
): Promise<{ report: SimulateRunReport; wallS: number }> {
  if (o.routers.length !== 1 || o.concurrency.length !== 1) {
    throw new Error("simulateOnce takes one router at one concurrency");
  }
  const workload = await loadWorkload(o.workload);
  const t0 = performance.now();
  const [report] = simulateSweep(o, workload);
  return { report, wallS: (performance.now() - t0) / 1000 };
}

/** `--jobs`: runs at once, one per core unless given. */
export const jobsOf = (raw: string | undefined): number =>
  raw === undefined ? availableParallelism() : parseFlag("jobs", integer(1, 64), raw);

/** Runs `script --one <spec>` and reads back the result it prints. */
function runChild<R>(script: string, spec: unknown): Promise<R> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [script, "--one", JSON.stringify(spec)],
      { maxBuffer: 1 << 24 },
      (err, stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    );
  });
}

/**
 * Every spec run by `script` in a child process, `jobs` at a time; the results come back in
 * the specs' order, and `describe` gives the line each one writes to stderr as it ends.
 */
export async function runInChildren<S, R>(
  script: string,
  specs: readonly S[],
  jobs: number,
  describe: (r: R) => string,
): Promise<R[]> {
  const out: R[] = new Array(specs.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < specs.length) {
      const i = next++;
      out[i] = await runChild<R>(script, specs[i]);
      process.stderr.write(`  [${++done}/${specs.length}] ${describe(out[i])}\n`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, specs.length) }, worker));
  return out;
}

/**
 * A scorecard's entry: with `--one SPEC` the child's side (one run, its result on stdout),
 * otherwise `main`, where a bad flag ends as in maitred's CLI: one line naming it, exit code 2.
 */
export async function benchEntry<S, R>(
  name: string,
  one: string | undefined,
  runOne: (spec: S) => Promise<R>,
  main: () => Promise<void>,
): Promise<void> {
  if (one !== undefined) {
    process.stdout.write(JSON.stringify(await runOne(JSON.parse(one) as S)));
    return;
  }
  try {
    await main();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${name}: invalid configuration: ${err.message}\n`);
    process.exitCode = 2;
  }
}

/** The closing line on stderr: runs, their summed wall time, and the time since `t0`. */
export const wallLine = (runs: readonly { wallS: number }[], t0: number) =>
  `# ${runs.length} runs: ${runs.reduce((a, r) => a + r.wallS, 0).toFixed(0)} s of run wall time, ${((performance.now() - t0) / 1000).toFixed(0)} s elapsed\n`;

const HOUR_MS = 3_600_000;
/** A simulated span as a reader says it: `2 h`, `50 min`. */
export const span = (ms: number) =>
  ms >= HOUR_MS && ms % HOUR_MS === 0 ? `${ms / HOUR_MS} h` : `${ms / 60_000} min`;

/** A scorecard run's simulated warm-up and window, as `--warmup` and `--duration` take them. */
export interface RunWindow {
  warmup: string;
  duration: string;
}

/** ThunderAgent's hour: steps are counted after a 10-minute warm-up. */
export const HOUR_WINDOW: RunWindow = { warmup: "10m", duration: "50m" };
/** `--quick`: a smoke run, not a measurement. */
export const QUICK_WINDOW: RunWindow = { warmup: "2m", duration: "8m" };
/**
 * The claude-code preset's: sessions of about 35 steps with tool calls of seconds to minutes
 * and human turns of minutes to hours, so the hour holds the start-up of 128 sessions at once,
 * not a steady state (its tr ÷ default moved by up to 10 % between such windows).
 */
export const CLAUDE_CODE_WINDOW: RunWindow = { warmup: "2h", duration: "10h" };

/**
 * One run of a host-tier scorecard on 2 × llama-3.1-8b-h100 with 26,000 KV blocks each
 * (≈ 52 GiB of KV per GPU), the shipped defaults otherwise: a window (`warmup`, `duration`),
 * or with `programs` a fixed batch run until its last program ends.
 */
export interface TierRun {
  workload: string;
  seed: number;
  router: SimRouter;
  /** Host KV tier per engine, GiB (`--kv-offloading-size`). */
  sizeGiB: number;
  concurrency: number;
  window?: RunWindow;
  programs?: number;
  /** tr's `--tail` preset; absent = the shipped one (`bounded`). */
  tail?: TailPreset;
}

/** What a fixed batch run reports, in seconds (null: not measured, e.g. the batch never ended). */
export interface BatchFigures {
  makespanS: number | null;
  completionP99S: number | null;
  firstResponseSpreadS: number | null;
}

export interface TierResult<S extends TierRun = TierRun> {
  spec: S;
  /** The `maitred simulate` command that reproduces the run. */
  command: string;
  stepsPerMin: number;
  stepP99S: number | null;
  /** Longest pause of a step answered in the window, or of one still held at its end. */
  longestWaitS: number;
  /** Prompt tokens the engines prefilled at admission (not GPU hits, not host loads). */
  prefilled: number;
  hostLoaded: number;
  hostLoadS: number;
  /** With `programs` only. */
  batch?: BatchFigures;
  wallS: number;
}

/** `maitred simulate`'s flags for a run, in the order the printed command gives them. */
function tierFlags(spec: TierRun): [string, string][] {
  return [
    ["workload", spec.workload],
    ["num-backends", "2"],
    ["profile", "llama-3.1-8b-h100"],
    ["num-gpu-blocks", "26000"],
    ["kv-offloading-size", String(spec.sizeGiB)],
    ...(spec.programs === undefined
      ? []
      : [["programs", String(spec.programs)] as [string, string]]),
    ["concurrency", String(spec.concurrency)],
    ["seed", String(spec.seed)],
    ["router", spec.router],
    ...(spec.tail === undefined ? [] : ([["tail", spec.tail]] as [string, string][])),
    ...(spec.window === undefined
      ? []
      : ([
          ["warmup", spec.window.warmup],
          ["duration", spec.window.duration],
        ] as [string, string][])),
  ];
}

/** The run's options, checked by the simulator's own parsers: a bad flag is a ConfigError. */
export const tierOptions = (spec: TierRun): SimulateOptions =>
  resolveSimulateFlags(Object.fromEntries(tierFlags(spec).map(([k, v]) => [camel(k), v])));

const seconds = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? null : ms / 1000;

/** One run, in this process (the child's side of `--one`). */
export async function runTier<S extends TierRun>(spec: S): Promise<TierResult<S>> {
  const flags = tierFlags(spec);
  const { report, wallS } = await simulateOnce(tierOptions(spec));
  const sum = (f: (b: (typeof report.backends)[number]) => number) =>
    report.backends.reduce((a, b) => a + f(b), 0);
  return {
    spec,
    command: ["maitred simulate", ...flags.map(([k, v]) => `--${k} ${v}`)].join(" "),
    stepsPerMin: report.steps_per_min,
    stepP99S: seconds(report.step_latency_ms.p99),
    longestWaitS:
      Math.max(report.paused_ms.per_step_max ?? 0, report.still_parked_max_ms ?? 0) / 1000,
    prefilled: sum((b) => b.prefilled_tokens),
    hostLoaded: sum((b) => b.host_loaded_tokens),
    hostLoadS: sum((b) => b.host_load_s),
    ...(spec.programs === undefined
      ? {}
      : {
          batch: {
            makespanS: seconds(report.batch?.makespan_ms),
            completionP99S: seconds(report.program_completion_ms.p99),
            firstResponseSpreadS: seconds(report.first_response_ms.spread),
          },
        }),
    wallS,
  };
}

/**
 * The runs saved by earlier invocations' `--json` (each a JSON array of results), from a
 * comma list of files; a later file's run replaces an earlier one's with the same `key`, so a
 * re-run of part of a sweep joins the rest.
 */
export function readRuns<R>(files: string, key: (r: R) => unknown): R[] {
  const byKey = new Map<string, R>();
  for (const file of files.split(",")) {
    for (const r of JSON.parse(readFileSync(file, "utf8")) as R[]) {
      byKey.set(JSON.stringify(key(r)), r);
    }
  }
  return [...byKey.values()];
}
