/**
 * `maitred bench` (one URL) and `maitred bench compare` (simulated backends behind each router
 * mode, plus extra URLs), both closed-loop agent workloads (src/bench, src/workload). The table
 * goes to stdout, the progress bar to stderr; `--json` and `--svg` write files.
 */

import { writeFile } from "node:fs/promises";
import type { Command } from "commander";
import {
  type BenchFlags,
  type CompareFlags,
  DEFAULT_CONCURRENCY,
  DEFAULT_DURATION,
  DEFAULT_URL,
  DEFAULT_WARMUP,
  resolveBenchFlags,
  resolveCompareFlags,
} from "../bench/bench-options.ts";
import { runCompare } from "../bench/compare.ts";
import { discoverModel } from "../bench/discover-model.ts";
import { formatRunsTable } from "../bench/format-table.ts";
import { type HtmlRun, renderHtmlReport } from "../bench/html-report.ts";
import { benchJson } from "../bench/report.ts";
import { runBenchAt } from "../bench/run-bench.ts";
import { startRouterProcess } from "../bench/start-router-for.ts";
import { renderSvgChart } from "../bench/svg-chart.ts";
import { ConfigError } from "../errors.ts";
import { DEFAULT_WORKLOAD, SHIPPED_TRACES } from "../workload/load-workload.ts";
import { presetNames } from "../workload/presets.ts";
import type { CliIo } from "./cli-io.ts";

function addCommonOptions(cmd: Command): Command {
  const workloads = [...presetNames(), ...Object.keys(SHIPPED_TRACES)].join(", ");
  return cmd
    .option(
      "--workload <name|file|mix>",
      `preset or trace: ${workloads}, a .jsonl path, or a mix of them, each with its share of the concurrency slots and an optional class: mix:chat@interactive=0.2,deepseek@bulk=0.8 (default: ${DEFAULT_WORKLOAD})`,
    )
    .option(
      "--class-mix <classes>",
      "priority class per program, sent as x-priority, drawn by seed from weights, e.g. interactive=0.2,bulk=0.8 (programs of a mix component with @class keep it)",
    )
    .option("--concurrency <n>", `programs in flight (default: ${DEFAULT_CONCURRENCY})`)
    .option("--time-scale <S>", "divide tool times (and simulated engines' time) by S (default: 1)")
    .option(
      "--tool-time-scale <x>",
      "multiply every tool (and human) time of the workload by x: what if the tools were slower (default: 1)",
    )
    .option("--warmup <duration>", `time before the steady window (default: ${DEFAULT_WARMUP})`)
    .option("--duration <duration>", `steady window (default: ${DEFAULT_DURATION})`)
    .option("--programs <n>", "stop after n programs have run (no window unless --duration)")
    .option("--seed <n>", "seeds program order, sampled values and text (default: 1)")
    .option("--stagger <duration>", "gap between program start offsets (default: 100ms)")
    .option(
      "--max-context <tokens>",
      "end programs before a call longer than this (default: the served max_model_len)",
    )
    .option(
      "--stream-share <share>",
      "share of programs whose requests stream (0..1); the others send plain JSON requests, as most agent harnesses do, and have no TTFT (default: 1)",
    )
    .option("--no-stream", "no program streams (--stream-share 0)")
    .option("--json <file>", "write the report as JSON")
    .option("--svg <file>", "write a bar chart of steps/min and p95 step latency")
    .option(
      "--html <file>",
      "write a self-contained page: run table, steps/min, step-latency CDF, pause timeline per program",
    )
    .option("--no-progress", "no progress bar");
}

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

/** Repeatable flag: every occurrence is kept (bench uses one URL, compare any number). */
const collect = (v: string, acc: string[] = []) => [...acc, v];

/**
 * Shared flags live on `bench` only and `compare` reads them with optsWithGlobals(): with the
 * same flag on both, commander would hand `bench compare --concurrency 8` to the parent.
 */
export function registerBench(program: Command, io: CliIo): void {
  const bench = addCommonOptions(
    program
      .command("bench")
      .description(
        "Drive closed-loop agent programs (trace replay or synthetic) against an OpenAI-compatible URL and report steps/min, latency, pauses and cache use",
      )
      .option(
        "--url <url>",
        `target base URL (default: ${DEFAULT_URL}); with compare: an extra URL to run too (repeatable)`,
        collect,
      )
      .option("--model <name>", "model to request (default: the first one /v1/models lists)")
      .option("--label <name>", "name of this run in the report (default: the URL)"),
  ).action(async (flags: Omit<BenchFlags, "url"> & { url?: string[] }) => {
    if ((flags.url?.length ?? 0) > 1)
      throw new ConfigError("--url", "bench takes one --url (compare takes several)");
    const o = resolveBenchFlags({ ...flags, url: flags.url?.[0] });
    const served = await discoverModel(o.url);
    const model = o.model ?? served?.id;
    if (!model) throw new ConfigError("--model", `cannot list models at ${o.url}; pass --model`);
    const { report, records } = await runBenchAt(o, {
      label: o.label,
      url: o.url,
      model,
      maxModelLen: served?.maxModelLen ?? null,
      programIdPrefix: `bench-${Date.now().toString(36)}-`,
    });
    io.stdout(`${formatRunsTable([report])}\n`);
    await writeOutputs([{ report, records }], o, `maitred bench: ${o.label}`);
  });

  bench
    .command("compare")
    .description(
      "Start simulated backends, put a router in each mode in front (default, tr; direct = no router), each as its own process (maitred sim-backend, maitred serve), and run the same workload against each, plus any --url; print a side-by-side table with ratios. The routers run with their defaults or MAITRED_* environment twins, their tick and timeouts scaled by --time-scale like the engines and tool times. Takes every `maitred bench` flag too.",
    )
    .option("--num-backends <n>", "simulated backends per mode (default: 1)")
    .option("--num-gpu-blocks <n>", "KV blocks per simulated backend (default: the profile's)")
    .option("--profile <name>", "timing profile of the simulated backends")
    .option("--modes <list>", "comma list of default, tr, direct (default: default,tr)")
    .action(async (_flags: unknown, cmd: Command) => {
      const o = resolveCompareFlags(cmd.optsWithGlobals() as CompareFlags);
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
