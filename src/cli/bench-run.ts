/**
 * What `maitred bench` and `maitred bench compare` run once their flags are read, loaded only
 * then: the driver, the routers' processes and the reports are none of `--help`'s business.
 */
import { writeFile } from "node:fs/promises";
import type { resolveBenchFlags, resolveCompareFlags } from "../bench/bench-options.ts";
import { runCompare } from "../bench/compare.ts";
import { discoverModel } from "../bench/discover-model.ts";
import { formatRunsTable } from "../bench/format-table.ts";
import { type HtmlRun, renderHtmlReport } from "../bench/html-report.ts";
import { startKvSampler } from "../bench/kv-sampler.ts";
import { benchJson } from "../bench/report.ts";
import { runBenchAt } from "../bench/run-bench.ts";
import { startRouterProcess } from "../bench/start-router-for.ts";
import { renderSvgChart } from "../bench/svg-chart.ts";
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

export async function runBenchCommand(
  o: ReturnType<typeof resolveBenchFlags>,
  io: CliIo,
): Promise<void> {
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
}

export async function runCompareCommand(
  o: ReturnType<typeof resolveCompareFlags>,
  io: CliIo,
): Promise<void> {
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
}
