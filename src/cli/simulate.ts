/**
 * `maitred simulate`: the router's scheduling core with simulated engines in virtual time
 * (src/simulate). The table goes to stdout, wall times to stderr (they never enter the JSON,
 * which is byte-identical for identical inputs); `--json` and `--svg` write files.
 */

import { writeFile } from "node:fs/promises";
import { performance } from "node:perf_hooks";
import type { Command } from "commander";
import { type HtmlRun, renderHtmlReport } from "../bench/html-report.ts";
import { renderSvgChart } from "../bench/svg-chart.ts";
import { DEFAULT_CONFIG, FIELDS } from "../config/router-config.ts";
import { DEFAULT_PROFILE, TIMING_PROFILES } from "../engine/timing.ts";
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_DURATION,
  DEFAULT_NUM_BACKENDS,
  DEFAULT_ROUTERS,
  DEFAULT_WARMUP,
  resolveSimulateFlags,
  type SimulateFlags,
  TR_KNOB_KEYS,
} from "../simulate/simulate-options.ts";
import { formatSimulateTable, simulateJson } from "../simulate/simulate-report.ts";
import { simulateSweep } from "../simulate/simulate-sweep.ts";
import { DEFAULT_WORKLOAD, loadWorkload, SHIPPED_TRACES } from "../workload/load-workload.ts";
import { presetNames } from "../workload/presets.ts";
import type { CliIo } from "./cli-io.ts";

function defaultText(prop: keyof typeof DEFAULT_CONFIG): string {
  const v = DEFAULT_CONFIG[prop];
  if (typeof v === "number" && /Ms$/.test(prop)) return `${v / 1000}`;
  return String(v);
}

/** Where serve's help says more than the simulator offers (it has no config file). */
const SIMULATE_HELP: Partial<Record<string, string>> = {
  priority: "turn on priority classes with the built-in class defaults",
};

export function registerSimulate(program: Command, io: CliIo): void {
  const workloads = [...presetNames(), ...Object.keys(SHIPPED_TRACES)].join(", ");
  const cmd = program
    .command("simulate")
    .description(
      "Run maitred's scheduling core with simulated vLLM engines in virtual time (no GPU, no sockets) and report steps/min, latency, pauses and engine truth per router and concurrency",
    )
    .option(
      "--router <list>",
      `comma list of tr, default, oracle (default router with unbounded KV: an upper bound) (default: ${DEFAULT_ROUTERS})`,
    )
    .option("--num-backends <n>", `simulated engines (default: ${DEFAULT_NUM_BACKENDS})`)
    .option(
      "--profile <name>",
      `timing profile: ${Object.keys(TIMING_PROFILES).join(", ")} (default: ${DEFAULT_PROFILE})`,
    )
    .option("--num-gpu-blocks <n>", "KV blocks of 16 tokens per engine (default: the profile's)")
    .option(
      "--concurrency <list>",
      `programs in flight; a comma list sweeps (default: ${DEFAULT_CONCURRENCY})`,
    )
    .option(
      "--workload <name|file|mix>",
      `preset or trace: ${workloads}, a .jsonl path, or a mix of them, each with its share of the concurrency slots and an optional class: mix:chat@interactive=0.2,deepseek@bulk=0.8 (default: ${DEFAULT_WORKLOAD})`,
    )
    .option(
      "--class-mix <classes>",
      "priority class per program, drawn by seed from weights, e.g. interactive=0.2,bulk=0.8 (programs of a mix component with @class keep it)",
    )
    .option("--warmup <duration>", `simulated time before the window (default: ${DEFAULT_WARMUP})`)
    .option("--duration <duration>", `simulated steady window (default: ${DEFAULT_DURATION})`)
    .option("--seed <n>", "seeds the workload and the engines (default: 1)")
    .option("--stagger <duration>", "gap between program start offsets (default: 100ms)")
    .option(
      "--tool-time-scale <x>",
      "multiply every tool (and human) time of the workload by x: what if the tools were slower (default: 1)",
    );
  for (const key of TR_KNOB_KEYS) {
    const f = FIELDS.find((x) => x.key === key);
    if (f === undefined) continue;
    const what = SIMULATE_HELP[key] ?? f.help;
    const help = `${what}, as maitred serve (default: ${f.defaultText ?? defaultText(f.prop)})`;
    cmd.option(f.arg ? `--${f.key} ${f.arg}` : `--${f.key}`, help);
  }
  cmd
    .option("--json <file>", "write the report as JSON ({runs: [...]}, series included)")
    .option("--svg <file>", "write a bar chart of steps/min and p95 step latency")
    .option(
      "--html <file>",
      "write a self-contained page: run table, steps/min, step-latency CDF, KV usage per backend over time, pause timeline per program",
    )
    .action(async (flags: SimulateFlags) => {
      const o = resolveSimulateFlags(flags);
      const workload = await loadWorkload(o.workload);
      let started = 0;
      const htmlRuns: HtmlRun[] = [];
      const reports = simulateSweep(o, workload, {
        onRunStart: () => {
          started = performance.now();
        },
        onRunEnd: (r, records) => {
          if (o.html) {
            const kv = {
              t_s: r.series.t_s,
              backends: r.series.backends.map((b) => ({ id: b.id, kv_usage: b.kv_usage })),
            };
            htmlRuns.push({ report: r, records, kv });
          }
          const wallS = (performance.now() - started) / 1000;
          const simS = (o.warmupMs + o.durationMs) / 1000;
          io.stderr(
            `${r.router} C=${r.concurrency}: ${r.steps_per_min} steps/min (${wallS.toFixed(1)} s wall, ${(simS / wallS).toFixed(0)} sim-s per wall-s)\n`,
          );
        },
      });
      io.stdout(`${formatSimulateTable(reports)}\n`);
      if (o.json) await writeFile(o.json, simulateJson(reports));
      if (o.svg) await writeFile(o.svg, renderSvgChart(reports));
      if (o.html) await writeFile(o.html, renderHtmlReport(htmlRuns, "maitred simulate"));
    });
}
