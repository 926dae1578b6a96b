/**
 * Debian's `prometheus` as a process of its own, scraping one target every 2 s from a scratch
 * folder, and its query API: what `check:prometheus` asks for every panel of the dashboard.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Clock, wallClock } from "../../runtime/clock.ts";
import { abortableSleep } from "../closed-loop.ts";
import { freePort } from "../free-port.ts";

/** Polls of /-/ready, 100 ms apart, before Prometheus is given up on. */
const READY_POLLS = 100;
const never = new AbortController().signal;

/** prometheus.yml: `target` (host:port) scraped every 2 s. */
export const prometheusConfig = (target: string) =>
  `global:\n  scrape_interval: 2s\nscrape_configs:\n  - job_name: maitred\n    static_configs:\n      - targets: ["${target}"]\n`;

/**
 * The query API's URL for a panel's `expr`. Grafana's `$__rate_interval` is given 30 s: above
 * four scrapes, as Grafana's own choice would be.
 */
export const queryUrl = (base: string, expr: string) =>
  `${base}/api/v1/query?query=${encodeURIComponent(expr.replaceAll("$__rate_interval", "30s"))}`;

export interface QueryAnswer {
  status: string;
  error?: string;
  data?: { result: { value: [number, string] }[] };
}

/** The values of an instant query's answer, one per series; an error answer throws. */
export function queryValues(expr: string, doc: QueryAnswer): number[] {
  if (doc.status !== "success") throw new Error(`${expr}: ${doc.error}`);
  return (doc.data?.result ?? []).map((r) => Number(r.value[1]));
}

/**
 * Waits until `url`/-/ready answers OK; throws once `startError()` has an error (Prometheus
 * could not start) or after about `polls` polls.
 */
export async function waitReady(
  url: string,
  startError: () => Error | null,
  clock: Clock = wallClock,
  polls = READY_POLLS,
): Promise<void> {
  for (let i = 0; ; i++) {
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return;
    const err = startError();
    if (err !== null)
      throw new Error(`cannot start prometheus (apt-get install prometheus): ${err}`);
    if (i > polls) throw new Error("prometheus did not become ready");
    await abortableSleep(clock, 100, never);
  }
}

export interface PrometheusProcess {
  url: string;
  /** Resolves once it answers; throws when it cannot start. */
  ready(): Promise<void>;
  /** An instant query's values, one per series. */
  query(expr: string): Promise<number[]>;
  stop(): Promise<void>;
}

/** `prometheus` on a free loopback port, keeping its config and data in `dir`. */
export async function startPrometheus(dir: string, target: string): Promise<PrometheusProcess> {
  const port = await freePort();
  writeFileSync(join(dir, "prometheus.yml"), prometheusConfig(target));
  const child = spawn(
    "prometheus",
    [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: "ignore" },
  );
  const url = `http://127.0.0.1:${port}`;
  let startError: Error | null = null;
  child.once("error", (err) => {
    startError = err; // not installed: ready() says so, and the caller still closes the rest
  });
  const exited = new Promise<void>((resolve) => {
    child.once("close", () => resolve());
  });
  return {
    url,
    ready: () => waitReady(url, () => startError),
    async query(expr) {
      const doc = (await (await fetch(queryUrl(url, expr))).json()) as QueryAnswer;
      return queryValues(expr, doc);
    },
    async stop() {
      child.kill("SIGTERM");
      if (startError === null) await exited;
    },
  };
}
