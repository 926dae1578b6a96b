/**
 * What the simulation scorecards (bench-tr, bench-tail) share: one simulated run timed in this
 * process, a pool that runs a script's runs in child processes `--jobs` at a time (a run is
 * single-threaded, so one per core is the most that helps), and the entry that makes a script
 * both the parent and, given `--one SPEC`, the child that does one run and prints its result
 * as JSON on stdout.
 */
import { execFile } from "node:child_process";
import { availableParallelism } from "node:os";
import { performance } from "node:perf_hooks";
import { parseFlag } from "../src/config/setting.ts";
import { integer } from "../src/config/values.ts";
import { ConfigError } from "../src/errors.ts";
import type { SimulateOptions } from "../src/simulate/simulate-options.ts";
import type { SimulateRunReport } from "../src/simulate/simulate-report.ts";
import { simulateSweep } from "../src/simulate/simulate-sweep.ts";
import { loadWorkload } from "../src/workload/load-workload.ts";

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
  const worker = async () => {
    while (next < specs.length) {
      const i = next++;
      out[i] = await runChild<R>(script, specs[i]);
      process.stderr.write(`  ${describe(out[i])}\n`);
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

export const mean = (xs: readonly number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;

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
