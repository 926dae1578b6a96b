/**
 * `maitred bench` (one URL) and `maitred bench compare` (simulated backends behind each router
 * mode, plus extra URLs), both closed-loop agent workloads (src/bench, src/workload). The table
 * goes to stdout, the progress bar to stderr; `--json` and `--svg` write files.
 */

import type { Command } from "commander";
import {
  BENCH_SETTINGS,
  COMMON_BENCH_SETTINGS,
  COMPARE_SETTINGS,
  resolveBenchFlags,
  resolveCompareFlags,
} from "../bench/bench-options.ts";
import { addSettingOptions } from "../config/setting.ts";
import type { CliIo } from "./cli-io.ts";

/**
 * Shared flags live on `bench` only and `compare` reads them with optsWithGlobals(): with the
 * same flag on both, commander would hand `bench compare --concurrency 8` to the parent.
 */
export function registerBench(program: Command, io: CliIo): void {
  const bench = program
    .command("bench")
    .description(
      "Drive closed-loop agent programs (trace replay or synthetic) against an OpenAI-compatible URL and report steps/min, latency, pauses and cache use",
    );
  addSettingOptions(bench, [
    ...Object.values(BENCH_SETTINGS),
    ...Object.values(COMMON_BENCH_SETTINGS),
  ]);
  bench.action(async (flags: Record<string, unknown>) => {
    const o = resolveBenchFlags(flags);
    // Loaded here, not with the command tree: `maitred --help` needs none of the driver.
    const { runBenchCommand } = await import("./bench-run.ts");
    await runBenchCommand(o, io);
  });

  const compare = bench
    .command("compare")
    .description(
      "Start simulated backends, put a router in each mode in front (default, tr; direct = no router), each as its own process (maitred sim-backend, maitred serve), and run the same workload against each, plus any --url; print a side-by-side table with ratios. The routers run with their defaults or MAITRED_* environment twins, their tick and timeouts scaled by --time-scale like the engines and tool times. Takes every `maitred bench` flag too.",
    );
  addSettingOptions(compare, Object.values(COMPARE_SETTINGS));
  compare.action(async (_flags: unknown, cmd: Command) => {
    const o = resolveCompareFlags(cmd.optsWithGlobals());
    const { runCompareCommand } = await import("./bench-run.ts");
    await runCompareCommand(o, io);
  });
}
