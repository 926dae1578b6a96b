/**
 * HAProxy in front of maitred cells, for the scripts that measure or soak them (`npm run soak
 * -- --cells N`, `npm run bench:cells`): the configuration `maitred cells haproxy-config`
 * writes (or the caller's version of it) on free loopback ports, checked with `haproxy -c`
 * before it starts. The caller drives its load through `url` and reads HAProxy's own
 * Prometheus endpoint for two things: when its health checks see every cell UP (a restarted
 * cell is back in the ring), and how many requests it sent again to another cell.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createWriteStream, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
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
export const HASH_BACKEND = "cells_by_program";
/** How often the caller's wait looks at HAProxy's view of the cells. */
const POLL_MS = 100;
/** Lines of HAProxy's stderr kept to explain an exit. */
const KEPT_LINES = 20;

export interface HaproxyProcess {
  /** Where clients send their requests. */
  url: string;
  pid: number;
  /** Resolves once HAProxy's checks have passed on every named cell; rejects past `timeoutMs`. */
  waitUp(names: readonly string[], timeoutMs: number): Promise<void>;
  /** Requests HAProxy has tried again on another cell so far (its retry counters). */
  retries(): Promise<number>;
  close(): Promise<void>;
}

export interface HaproxyStart {
  cells: readonly Cell[];
  /** Where its configuration (`haproxy.cfg`) is written. */
  dir: string;
  /**
   * The configuration for the two loopback addresses (clients', statistics'); default: what
   * `maitred cells haproxy-config` writes for `cells`.
   */
  config?: (bind: string, statsBind: string) => string;
  /** HAProxy's stdout and stderr, as written, into this file (the soak's `haproxy.log`). */
  logFile?: string;
  /** Each line of HAProxy's stdout (its log, with `log stdout`), as it comes. */
  onLine?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
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

/** HAProxy in front of `o.cells`, started once `haproxy -c` accepts its configuration. */
export async function startHaproxy(o: HaproxyStart): Promise<HaproxyProcess> {
  const bind = `127.0.0.1:${await freePort()}`;
  const statsBind = `127.0.0.1:${await freePort()}`;
  const text =
    o.config?.(bind, statsBind) ??
    haproxyConfig({ cells: o.cells, bind, statsBind, identityOrder: IDENTITY_SOURCES });
  const file = join(o.dir, "haproxy.cfg");
  writeFileSync(file, text);
  const check = spawnSync("haproxy", ["-c", "-f", file], { encoding: "utf8" });
  if (check.status !== 0) {
    throw new Error(`haproxy -c rejected ${file}:\n${check.stdout}${check.stderr}`);
  }
  const child: ChildProcess = spawn("haproxy", ["-f", file, "-db"], {
    stdio: ["ignore", "pipe", "pipe"],
    env: o.env ?? process.env,
  });
  const stdout = child.stdout as NodeJS.ReadableStream;
  const stderr = child.stderr as NodeJS.ReadableStream;
  const log = o.logFile === undefined ? null : createWriteStream(o.logFile);
  if (log !== null) {
    stdout.pipe(log);
    stderr.pipe(log);
  }
  if (o.onLine !== undefined) createInterface({ input: stdout }).on("line", o.onLine);
  else if (log === null) stdout.resume();
  const stderrTail: string[] = [];
  createInterface({ input: stderr }).on("line", (line) => {
    stderrTail.push(line);
    if (stderrTail.length > KEPT_LINES) stderrTail.shift();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const metrics = async () => (await fetch(`http://${statsBind}/metrics`)).text();
  return {
    url: `http://${bind}`,
    pid: child.pid as number,
    async waitUp(names, timeoutMs) {
      // Servers start out UP but unchecked: wait for each one's check to pass.
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (child.exitCode !== null) {
          throw new Error(`haproxy exited (${child.exitCode}):\n${stderrTail.join("\n")}`);
        }
        const text = await metrics().catch(() => ""); // "": not listening yet
        if (names.every((n) => cellUp(text, n))) return;
        if (Date.now() > deadline) {
          throw new Error(`HAProxy did not see ${names.join(", ")} UP within ${timeoutMs} ms`);
        }
        await Promise.race([new Promise((r) => setTimeout(r, POLL_MS)), exited]);
      }
    },
    async retries() {
      const fams = parsePrometheusText(await metrics());
      return sumOf(fams, "haproxy_backend_retry_warnings_total") ?? 0;
    },
    async close() {
      await stopProcess(child);
      log?.end();
    },
  };
}
