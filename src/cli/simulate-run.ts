/**
 * What `maitred simulate` runs once its flags are read, loaded only then: the simulator, the
 * reports and the charts are none of `--help`'s business.
 */
import { writeFile } from "node:fs/promises";
import { performance } from "node:perf_hooks";
import { type HtmlRun, renderHtmlReport } from "../bench/html-report.ts";
import { renderSvgChart } from "../bench/svg-chart.ts";
import type { SimulateOptions } from "../simulate/simulate-options.ts";
import { formatSimulateTable, simulateJson } from "../simulate/simulate-report.ts";
import { simulateSweep } from "../simulate/simulate-sweep.ts";
import { loadWorkload } from "../workload/load-workload.ts";
import type { CliIo } from "./cli-io.ts";

export async function runSimulateCommand(o: SimulateOptions, io: CliIo): Promise<void> {
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
          backends: r.series.backends.map((b) => ({
            id: b.id,
            kv_usage: b.kv_usage,
            ...(b.host_usage === undefined ? {} : { host_usage: b.host_usage }),
          })),
        };
        htmlRuns.push({ report: r, records, kv });
      }
      const wallS = (performance.now() - started) / 1000;
      const simS = records.endMs / 1000;
      io.stderr(
        `${r.router} C=${r.concurrency}: ${r.steps_per_min} steps/min (${wallS.toFixed(1)} s wall, ${(simS / wallS).toFixed(0)} sim-s per wall-s)\n`,
      );
    },
  });
  io.stdout(`${formatSimulateTable(reports)}\n`);
  if (o.json) await writeFile(o.json, simulateJson(reports));
  if (o.svg) await writeFile(o.svg, renderSvgChart(reports));
  if (o.html) await writeFile(o.html, renderHtmlReport(htmlRuns, "maitred simulate"));
}
