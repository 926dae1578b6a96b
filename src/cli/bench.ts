/**
 * `maitred bench` (one URL) and `maitred bench compare` (simulated backends behind each router
 * mode, plus extra URLs), both closed-loop agent workloads (src/bench, src/workload). The table
 * goes to stdout, the progress bar to stderr; `--json` and `--svg` write files.
 */

import { writeFile } from "node:fs/promises";
import type { Command } from "commander";
import {
  BENCH_SETTINGS,
  COMMON_BENCH_SETTINGS,
  COMPARE_SETTINGS,
  resolveBenchFlags,
  resolveCompareFlags,
} from "../bench/bench-options.ts";
import { runCompare } from "../bench/compare.ts";
import { discoverModel } from "../bench/discover-model.ts";
import { formatRunsTable } from "../bench/format-table.ts";
import { type HtmlRun, renderHtmlReport } from "../bench/html-report.ts";
import { startKvSampler } from "../bench/kv-sampler.ts";
import { benchJson } from "../bench/report.ts";
import { runBenchAt } from "../bench/run-bench.ts";
import { startRouterProcess } from "../bench/start-router-for.ts";
import { renderSvgChart } from "../bench/svg-chart.ts";
import { addSettingOptions } from "../config/setting.ts";
import { ConfigError } from "../errors.ts";
import type { CliIo } from "./cli-io.ts";

async function writeOutputs(
  runs: HtmlRun[],
  o: { json?: string; svg?: string; html?: string },
  title: string,
): Promise<void> {
  const reports = runs.map((r) => r.report);
  if (o.json) await writeFile(o.json, `${JSON.stringify(benchJson(reports), null, 2)}\n`);
  if (o.svg) await writeFile(o.svg, renderSvgChart(reports));
  if (o.html) await writeFile(o.html, renderHtmlReport(runs, title));
}

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
    const served = await discoverModel(o.url);
    const model = o.model ?? served?.id;
    if (!model) throw new ConfigError("model", `cannot list models at ${o.url}; pass --model`);
    // The page charts KV use per backend, read from the target's own /metrics.
    const sampler = o.html ? startKvSampler([o.url]) : null;
    const run = runBenchAt(o, {
      label: o.label,
      url: o.url,
      model,
      maxModelLen: served?.maxModelLen ?? null,
      programIdPrefix: `bench-${Date.now().toString(36)}-`,
    });
    // Stopped however the run ends, so that a failed run leaves no timer behind.
    const { report, records } = await run.finally(() => sampler?.stop());
    const kv = (await sampler?.stop()) ?? null;
    io.stdout(`${formatRunsTable([report])}\n`);
    await writeOutputs([{ report, records, kv }], o, `maitred bench: ${o.label}`);
  });

  const compare = bench
    .command("compare")
    .description(
      "Start simulated backends, put a router in each mode in front (default, tr; direct = no router), each as its own process (maitred sim-backend, maitred serve), and run the same workload against each, plus any --url; print a side-by-side table with ratios. The routers run with their defaults or MAITRED_* environment twins, their tick and timeouts scaled by --time-scale like the engines and tool times. Takes every `maitred bench` flag too.",
    );
  addSettingOptions(compare, Object.values(COMPARE_SETTINGS));
  compare.action(async (_flags: unknown, cmd: Command) => {
    const o = resolveCompareFlags(cmd.optsWithGlobals());
    const done: HtmlRun[] = [];
    const runs = await runCompare({
      ...o,
      startRouter: startRouterProcess,
      sampleKv: o.html !== undefined,
      onRun: (report, records, kv) => {
        io.stderr(`${report.router}: ${report.steps_per_min} steps/min\n`);
        done.push({ report, records, kv });
      },
    });
    io.stdout(`${formatRunsTable(runs)}\n`);
    await writeOutputs(done, o, "maitred bench compare");
  });
}
