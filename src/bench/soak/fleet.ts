/**
 * The soak's processes: N simulated backends, each its own `maitred sim-backend`, and one
 * `maitred serve` in front of them, or with `--cells N` N cells (each a `maitred serve --cell
 * cell-<letter>` with `--backends` sim-backends of its own) behind HAProxy with the
 * configuration `maitred cells haproxy-config` writes. Faults kill and restart them here; every
 * line a router logs goes to the log file and the access tally.
 */
import { join } from "node:path";
import { type SimBackendSettings, simBackendArgs, simBackendSettings } from "../compare.ts";
import {
  HAPROXY_MISSING,
  type HaproxyProcess,
  haproxyInstalled,
  startHaproxy,
} from "../haproxy-process.ts";
import { type MaitredProcess, startMaitredProcess, startServeProcess } from "../maitred-process.ts";
import { processCpuSeconds, processRssBytes } from "../process-stats.ts";
import { type CpuSets, pin, TASKSET_MISSING, tasksetInstalled } from "./cpus.ts";
import { createInvariantChecker, type InvariantChecker } from "./invariants.ts";
import type { SoakSettings } from "./spec.ts";

/** How long HAProxy gets to see every cell UP, at the start and after a cell's restart. */
const CELLS_UP_TIMEOUT_MS = 30_000;

/** What stops a soak before it starts anything (said on stderr, exit 2), or null. */
export function soakPrerequisiteProblem(s: SoakSettings): string | null {
  if (s.cells > 0 && !haproxyInstalled()) return HAPROXY_MISSING;
  if (s.routerCpus !== undefined && !tasksetInstalled()) return TASKSET_MISSING;
  return null;
}

/** A cell's name, by its index: `cell-a`, `cell-b`, …; the lone router is `router`. */
export const routerName = (cells: number, index: number) =>
  cells > 0 ? `cell-${String.fromCharCode(97 + index)}` : "router";

export interface Backend {
  settings: SimBackendSettings;
  proc: MaitredProcess;
  url: string;
}

/** One router: the lone one, or a cell (its `serve` may be killed and started again). */
export interface SoakRouter {
  name: string;
  backendUrls: string[];
  /** Its port, kept across restarts (HAProxy's configuration names it). */
  port: number;
  url: string;
  pid: number;
  proc: MaitredProcess;
  /** False from a kill until its restart is listening. */
  up: boolean;
  /** A restarted cell starts with no program: its checks start afresh with it. */
  checker: InvariantChecker;
  /** CPU seconds of its earlier, killed processes. */
  cpuBeforeS: number;
  restarts: number;
  /** Its last sample (for its RSS, live programs and programs left). */
  last: { rssMb: number | null; live: number };
}

export interface Fleet {
  backends: Backend[];
  routers: SoakRouter[];
  cellNames: string[];
  hap: HaproxyProcess | null;
  /** Where the load goes: HAProxy in front of the cells, or the lone router (once started). */
  entryUrl: string;
  /** Every backend, then every router, then HAProxy; each waits for the one before. */
  start(): Promise<void>;
  /** SIGKILL a backend, and start it again on its port. */
  killBackend(b: Backend): Promise<void>;
  restartBackend(b: Backend): Promise<void>;
  /** SIGKILL a cell's `serve` (its CPU so far kept), and start it again, empty, on its port. */
  killCell(rt: SoakRouter): Promise<void>;
  /** Resolves with the ms HAProxy took to see the restarted cell UP. */
  restartCell(rt: SoakRouter): Promise<number>;
  /** Everything started, stopped (a stopped backend is let go on first). */
  close(): Promise<void>;
}

export interface FleetOptions {
  /** Where HAProxy's configuration and log go. */
  dir: string;
  cpus: CpuSets | null;
  /** Every line a router logs. */
  onLine: (line: string) => void;
}

/** A process's RSS (MB) and CPU seconds so far; null for both once it is gone. */
export function procStats(pid: number): { rssMb: number | null; cpuS: number | null } {
  try {
    return { rssMb: processRssBytes(pid) / (1024 * 1024), cpuS: processCpuSeconds(pid) };
  } catch {
    return { rssMb: null, cpuS: null };
  }
}

export function createFleet(s: SoakSettings, o: FleetOptions): Fleet {
  const backend = async (settings: SimBackendSettings) => {
    const proc = await startMaitredProcess(
      ["sim-backend", ...simBackendArgs(settings), "--log-level", "info"],
      "sim-backend listening",
    );
    pin(proc.pid, o.cpus?.others);
    return proc;
  };
  /** `maitred serve` for router `name` (a cell's name with `--cells`). */
  const serve = async (name: string, backendUrls: readonly string[], port: number) => {
    const sec = (ms: number) => String(ms / 1000);
    const proc = await startServeProcess(
      [
        ...["--router", s.router, "--backends", backendUrls.join(",")],
        ...(s.cells > 0 ? ["--cell", name] : []),
        ...["--access-log", "on"],
        ...["--scheduler-interval", sec(s.tickMs), "--poll-timeout", sec(s.pollTimeoutMs)],
        ...["--idle-timeout", sec(s.idleTimeoutMs), "--max-pause", sec(s.maxPauseMs)],
      ],
      {
        port,
        env:
          s.routerNodeOptions === undefined
            ? process.env
            : { ...process.env, NODE_OPTIONS: s.routerNodeOptions },
        onLine: o.onLine,
      },
    );
    pin(proc.pid, o.cpus?.router);
    return { url: proc.url, pid: proc.pid, proc };
  };
  const fleet: Fleet = {
    backends: [],
    routers: [],
    cellNames: [],
    hap: null,
    entryUrl: "",
    async start() {
      for (let i = 0; i < s.totalBackends; i++) {
        const settings = simBackendSettings(
          { timeScale: s.timeScale, numGpuBlocks: s.numGpuBlocks },
          i,
        );
        const proc = await backend(settings);
        const port = Number(new URL(proc.url).port);
        fleet.backends.push({ settings: { ...settings, port }, proc, url: proc.url });
      }
      for (let c = 0; c < Math.max(1, s.cells); c++) {
        const name = routerName(s.cells, c);
        const per = s.backendsPerRouter;
        const backendUrls = fleet.backends.slice(c * per, (c + 1) * per).map((b) => b.url);
        const p = await serve(name, backendUrls, 0);
        fleet.routers.push({
          name,
          backendUrls,
          port: Number(new URL(p.url).port),
          ...p,
          up: true,
          checker: createInvariantChecker(s.limits),
          cpuBeforeS: 0,
          restarts: 0,
          last: { rssMb: null, live: 0 },
        });
      }
      fleet.cellNames = fleet.routers.map((rt) => rt.name);
      if (s.cells > 0) {
        const hap = await startHaproxy({
          cells: fleet.routers.map((rt) => ({ name: rt.name, address: `127.0.0.1:${rt.port}` })),
          dir: o.dir,
          logFile: join(o.dir, "haproxy.log"),
        });
        fleet.hap = hap;
        pin(hap.pid, o.cpus?.others);
        await hap.waitUp(fleet.cellNames, CELLS_UP_TIMEOUT_MS);
      }
      fleet.entryUrl = fleet.hap?.url ?? fleet.routers[0].url;
    },
    killBackend: (b) => b.proc.kill(),
    async restartBackend(b) {
      b.proc = await backend(b.settings);
    },
    async killCell(rt) {
      rt.cpuBeforeS += procStats(rt.pid).cpuS ?? 0;
      rt.up = false;
      await rt.proc.kill();
    },
    async restartCell(rt) {
      Object.assign(rt, await serve(rt.name, rt.backendUrls, rt.port));
      rt.checker = createInvariantChecker(s.limits);
      rt.restarts++;
      rt.up = true;
      const back = Date.now();
      await (fleet.hap as HaproxyProcess).waitUp(fleet.cellNames, CELLS_UP_TIMEOUT_MS);
      return Date.now() - back;
    },
    async close() {
      await fleet.hap?.close();
      for (const rt of fleet.routers) await rt.proc.close();
      for (const b of fleet.backends) {
        try {
          process.kill(b.proc.pid, "SIGCONT");
        } catch {}
        await b.proc.close();
      }
    },
  };
  return fleet;
}
