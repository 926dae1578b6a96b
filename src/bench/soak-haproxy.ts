/**
 * HAProxy in front of the soak's cells (`soak --cells N`): the configuration
 * `maitred cells haproxy-config` writes, unchanged, on free loopback ports, checked with
 * `haproxy -c` before it starts. The soak drives its load through `url` and reads HAProxy's own
 * Prometheus endpoint for two things: when its health checks see every cell UP (a restarted
 * cell is back in the ring), and how many requests it sent again to another cell (each may
 * leave one more access log line on the cells than requests were sent).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createWriteStream, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parsePrometheusText, sumOf } from "../backends/prometheus-text.ts";
import { type Cell, haproxyConfig } from "../cells/haproxy-config.ts";
import { IDENTITY_SOURCES } from "../config/identity-sources.ts";
import { freePort } from "./free-port.ts";
import { stopProcess } from "./maitred-process.ts";

/** What `--cells` says when HAProxy is not on the PATH. */
export const HAPROXY_MISSING =
  "--cells puts HAProxy in front of the cells, and haproxy is not installed: apt-get install haproxy (2.6 or newer)";

/** Whether `haproxy` can be run. */
export function haproxyInstalled(): boolean {
  return spawnSync("haproxy", ["-v"]).error === undefined;
}

/** The proxy whose servers hash program ids (haproxy-config.ts) and carry the health checks. */
const HASH_BACKEND = "cells_by_program";
/** How often the soak looks at HAProxy's view of the cells while it waits. */
const POLL_MS = 100;

export interface SoakHaproxy {
  /** Where clients send their requests. */
  url: string;
  pid: number;
  /** Resolves once HAProxy's checks have passed on every named cell; rejects past `timeoutMs`. */
  waitUp(names: readonly string[], timeoutMs: number): Promise<void>;
  /** Requests HAProxy has tried again on another cell so far (its retry counters). */
  retries(): Promise<number>;
  close(): Promise<void>;
}

/** Whether HAProxy's metrics show `name` UP in the hash ring with its last check passed. */
export function cellUp(metricsText: string, name: string): boolean {
  return (
    metricsText.includes(
      `haproxy_server_status{proxy="${HASH_BACKEND}",server="${name}",state="UP"} 1`,
    ) &&
    metricsText.includes(
      `haproxy_server_check_status{proxy="${HASH_BACKEND}",server="${name}",state="L7OK"} 1`,
    )
  );
}

/** HAProxy in front of `cells`; its config and log (`haproxy.log`) go in `dir`. */
export async function startSoakHaproxy(cells: readonly Cell[], dir: string): Promise<SoakHaproxy> {
  const bind = `127.0.0.1:${await freePort()}`;
  const statsBind = `127.0.0.1:${await freePort()}`;
  const file = join(dir, "haproxy.cfg");
  writeFileSync(file, haproxyConfig({ cells, bind, statsBind, identityOrder: IDENTITY_SOURCES }));
  const check = spawnSync("haproxy", ["-c", "-f", file], { encoding: "utf8" });
  if (check.status !== 0) {
    throw new Error(`haproxy -c rejected ${file}:\n${check.stdout}${check.stderr}`);
  }
  const child: ChildProcess = spawn("haproxy", ["-f", file, "-db"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const log = createWriteStream(join(dir, "haproxy.log"));
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const metrics = async () => (await fetch(`http://${statsBind}/metrics`)).text();
  return {
    url: `http://${bind}`,
    pid: child.pid as number,
    async waitUp(names, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (child.exitCode !== null)
          throw new Error(`haproxy exited (${child.exitCode}); see ${dir}`);
        const text = await metrics().catch(() => "");
        if (names.every((n) => cellUp(text, n))) return;
        if (Date.now() > deadline) {
          throw new Error(`HAProxy did not see ${names.join(", ")} UP within ${timeoutMs} ms`);
        }
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    },
    async retries() {
      const fams = parsePrometheusText(await metrics());
      return sumOf(fams, "haproxy_backend_retry_warnings_total") ?? 0;
    },
    async close() {
      await stopProcess(child);
      log.end();
    },
  };
}
