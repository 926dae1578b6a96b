/**
 * `check:prometheus`: does the Grafana dashboard (config/grafana/maitred-dashboard.json) show
 * something? `maitred serve --priority` in front of two small simulated backends (its own
 * process) under an agent workload with an interactive and a bulk class, Prometheus scraping
 * it every 2 s; after the run every query of every panel must return data, and
 * `promtool check metrics` must pass the router's `/metrics`.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { wallClock } from "../../runtime/clock.ts";
import { loadWorkload, parseWorkloadArg } from "../../workload/load-workload.ts";
import { abortableSleep, startClosedLoop } from "../closed-loop.ts";
import { discoverModel } from "../discover-model.ts";
import { startSmallServe } from "../maitred-process.ts";
import { markdownTable } from "../markdown-table.ts";
import type { ScriptSpec } from "../script-args.ts";
import { progress } from "../script-entry.ts";
import { concurrencyFlag, durationFlag } from "../script-flags.ts";
import { createStepClient } from "../step-client.ts";
import { startPrometheus } from "./prometheus.ts";

export const PROMETHEUS_SPEC = {
  name: "check:prometheus",
  summary:
    "Does the Grafana dashboard show something? Prometheus scrapes `maitred serve --priority` under an agent workload; every panel's queries must return data and promtool must pass /metrics.",
  runtime:
    "about 70 s: --duration (60 s) of load, two more scrapes (5 s) and the start-up; progress on stderr; needs prometheus and promtool",
  flags: {
    duration: durationFlag({ default: "60s" }, "wall time of the load"),
    concurrency: concurrencyFlag("24", "programs in flight", { max: 10_000 }),
  },
} satisfies ScriptSpec;

const TIME_SCALE = 5;
/** Small KV caches, so that programs pause and classes queue within a minute. */
const NUM_GPU_BLOCKS = 700;
const DASHBOARD = new URL("../../../config/grafana/maitred-dashboard.json", import.meta.url);
const never = new AbortController().signal;

export interface Panel {
  title: string;
  targets: { expr: string }[];
}

/**
 * One row per panel: its title and how many series its queries gave a value; `empty` when a
 * panel got none.
 */
export async function panelRows(
  panels: readonly Panel[],
  query: (expr: string) => Promise<number[]>,
): Promise<{ rows: string[][]; empty: boolean }> {
  const rows: string[][] = [];
  let empty = false;
  for (const panel of panels) {
    let series = 0;
    for (const t of panel.targets)
      series += (await query(t.expr)).filter((v) => !Number.isNaN(v)).length;
    if (series === 0) empty = true;
    rows.push([panel.title, series === 0 ? "**none**" : String(series)]);
  }
  return { rows, empty };
}

/** promtool's verdict on /metrics: clean only when it exits 0 and says nothing. */
export function promtoolVerdict(status: number | null, said: string) {
  const clean = status === 0 && said === "";
  return { clean, line: `promtool check metrics: ${clean ? "clean" : `exit ${status}: ${said}`}` };
}

/** Runs the check and prints its report; whether every panel had data and promtool passed. */
export async function runPrometheusCheck(o: {
  durationMs: number;
  concurrency: number;
}): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), "maitred-prom-"));
  const router = await startSmallServe(NUM_GPU_BLOCKS, TIME_SCALE, ["--priority"]);
  const prometheus = await startPrometheus(dir, new URL(router.url).host);
  let passed = true;
  try {
    await prometheus.ready();
    progress(`Prometheus ready; load for ${(o.durationMs / 1000).toFixed(0)} s`);
    const served = await discoverModel(router.url);
    if (served === null) throw new Error(`no model at ${router.url}`);
    const client = createStepClient({ url: router.url, connections: o.concurrency });
    const loop = startClosedLoop({
      workload: await loadWorkload(
        parseWorkloadArg("mix:chat@interactive=0.3,deepseek@bulk=0.7", { seed: 1 }),
      ),
      client,
      model: served.id,
      concurrency: o.concurrency,
      timeScale: TIME_SCALE,
      warmupMs: 0,
      durationMs: o.durationMs,
      streamShare: 0.5,
    });
    const records = await loop.done;
    await client.close();
    progress("load done; two more scrapes, then every panel's queries");
    await abortableSleep(wallClock, 5000, never); // two more scrapes

    const metrics = await (await fetch(`${router.url}/metrics`)).text();
    const lint = spawnSync("promtool", ["check", "metrics"], { input: metrics, encoding: "utf8" });
    const verdict = promtoolVerdict(lint.status, `${lint.stdout}${lint.stderr}`.trim());
    console.log(
      `maitred serve --priority, 2 simulated backends (${NUM_GPU_BLOCKS} blocks, time scale ${TIME_SCALE}), ${o.concurrency} programs (30 % chat@interactive, 70 % deepseek@bulk), ${(o.durationMs / 1000).toFixed(0)} s: ${records.steps.length} steps; Prometheus scraping every 2 s`,
    );
    console.log(verdict.line);
    console.log("");
    const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as { panels: Panel[] };
    const { rows, empty } = await panelRows(dashboard.panels, (e) => prometheus.query(e));
    console.log(markdownTable(["panel", "series with a value"], rows));
    passed = verdict.clean && !empty;
  } finally {
    await prometheus.stop();
    await router.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return passed;
}
