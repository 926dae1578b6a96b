/**
 * Does the Grafana dashboard (config/grafana/maitred-dashboard.json) show something? Starts
 * `maitred serve --priority` in front of two small simulated backends (its own process), puts
 * an agent workload with an interactive and a bulk class through it, runs Debian's
 * `prometheus` scraping it every 2 s, and after the run asks Prometheus every query of every
 * panel. Also runs `promtool check metrics` on the router's `/metrics`. Prints one row per
 * panel; exits 1 when a panel has no data or promtool complains.
 *
 *   node scripts/check-prometheus.ts [--duration 60s] [--concurrency 24]
 *
 * Needs `prometheus` and `promtool` on PATH (Debian: `apt-get install prometheus`).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { abortableSleep, startClosedLoop } from "../src/bench/closed-loop.ts";
import { discoverModel } from "../src/bench/discover-model.ts";
import { freePort } from "../src/bench/free-port.ts";
import { startSmallServe } from "../src/bench/maitred-process.ts";
import { markdownTable } from "../src/bench/markdown-table.ts";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { progress, scriptArgs } from "../src/bench/script-entry.ts";
import { concurrencyFlag, durationFlag } from "../src/bench/script-flags.ts";
import { createStepClient } from "../src/bench/step-client.ts";
import { wallClock } from "../src/runtime/clock.ts";
import { loadWorkload, parseWorkloadArg } from "../src/workload/load-workload.ts";

const SPEC = {
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
const { values: a, parsed } = scriptArgs(SPEC);
const durationMs = parsed.duration;
const TIME_SCALE = 5;
const never = new AbortController().signal;
const sleep = (ms: number) => abortableSleep(wallClock, ms, never);

interface Panel {
  title: string;
  targets: { expr: string }[];
}

const dir = mkdtempSync(join(tmpdir(), "maitred-prom-"));
// Small KV caches, so that programs pause and classes queue within a minute.
const router = await startSmallServe(700, TIME_SCALE, ["--priority"]);
const promPort = await freePort();
const target = new URL(router.url).host;
writeFileSync(
  join(dir, "prometheus.yml"),
  `global:\n  scrape_interval: 2s\nscrape_configs:\n  - job_name: maitred\n    static_configs:\n      - targets: ["${target}"]\n`,
);
const prometheus = spawn(
  "prometheus",
  [
    `--config.file=${join(dir, "prometheus.yml")}`,
    `--storage.tsdb.path=${join(dir, "data")}`,
    `--web.listen-address=127.0.0.1:${promPort}`,
  ],
  { stdio: "ignore" },
);
const promUrl = `http://127.0.0.1:${promPort}`;
let promError: Error | null = null;
prometheus.once("error", (err) => {
  promError = err; // not installed: said below, and the router still closes
});
const promExited = new Promise<void>((resolve) => {
  prometheus.once("close", () => resolve());
});

async function query(expr: string): Promise<number[]> {
  const url = `${promUrl}/api/v1/query?query=${encodeURIComponent(expr.replaceAll("$__rate_interval", "30s"))}`;
  const doc = (await (await fetch(url)).json()) as {
    status: string;
    error?: string;
    data?: { result: { value: [number, string] }[] };
  };
  if (doc.status !== "success") throw new Error(`${expr}: ${doc.error}`);
  return (doc.data?.result ?? []).map((r) => Number(r.value[1]));
}

let failed = false;
try {
  for (let i = 0; ; i++) {
    const ready = await fetch(`${promUrl}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (promError !== null)
      throw new Error(`cannot start prometheus (apt-get install prometheus): ${promError}`);
    if (i > 100) throw new Error("prometheus did not become ready");
    await sleep(100);
  }

  progress(`Prometheus ready; load for ${(durationMs / 1000).toFixed(0)} s`);
  const served = await discoverModel(router.url);
  if (served === null) throw new Error(`no model at ${router.url}`);
  const client = createStepClient({ url: router.url, connections: Number(a.concurrency) });
  const loop = startClosedLoop({
    workload: await loadWorkload(
      parseWorkloadArg("mix:chat@interactive=0.3,deepseek@bulk=0.7", { seed: 1 }),
    ),
    client,
    model: served.id,
    concurrency: Number(a.concurrency),
    timeScale: TIME_SCALE,
    warmupMs: 0,
    durationMs,
    streamShare: 0.5,
  });
  const records = await loop.done;
  await client.close();
  progress("load done; two more scrapes, then every panel's queries");
  await sleep(5000); // two more scrapes

  const metrics = await (await fetch(`${router.url}/metrics`)).text();
  const lint = spawnSync("promtool", ["check", "metrics"], { input: metrics, encoding: "utf8" });
  const lintText = `${lint.stdout}${lint.stderr}`.trim();
  console.log(
    `maitred serve --priority, 2 simulated backends (700 blocks, time scale ${TIME_SCALE}), ${a.concurrency} programs (30 % chat@interactive, 70 % deepseek@bulk), ${(durationMs / 1000).toFixed(0)} s: ${records.steps.length} steps; Prometheus scraping every 2 s`,
  );
  console.log(
    `promtool check metrics: ${lint.status === 0 && lintText === "" ? "clean" : `exit ${lint.status}: ${lintText}`}`,
  );
  if (lint.status !== 0 || lintText !== "") failed = true;
  console.log("");
  const dashboard = JSON.parse(
    readFileSync(new URL("../config/grafana/maitred-dashboard.json", import.meta.url), "utf8"),
  ) as { panels: Panel[] };
  const rows: string[][] = [];
  for (const panel of dashboard.panels) {
    let series = 0;
    for (const t of panel.targets)
      series += (await query(t.expr)).filter((v) => !Number.isNaN(v)).length;
    if (series === 0) failed = true;
    rows.push([panel.title, series === 0 ? "**none**" : String(series)]);
  }
  console.log(markdownTable(["panel", "series with a value"], rows));
} finally {
  prometheus.kill("SIGTERM");
  if (promError === null) await promExited;
  await router.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
