import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { processCpuSeconds } from "./process-stats.ts";

/**
 * A `maitred` command run as its own process, as users run it (`bench compare` races
 * routers and simulated backends this way, so none of them shares the driver's event loop
 * or CPU time with another). Ready when the command logs its listening line, whose `url` it
 * returns; the process is stopped with SIGTERM (then SIGKILL) by `close()`.
 */

export interface MaitredProcess {
  url: string;
  /** Its process id (its CPU time can be read from /proc). */
  pid: number;
  close(): Promise<void>;
  /** SIGKILL: the process dies at once, its connections reset (a crashed server). */
  kill(): Promise<void>;
}

/**
 * The `maitred` command itself (its launcher, src/launch.mjs), from the source in the
 * repository or from the built module when installed: a router started here is started as a
 * user's `maitred serve` is.
 */
const MAIN = fileURLToPath(
  new URL(
    import.meta.url.endsWith(".js") ? "../../src/launch.mjs" : "../launch.mjs",
    import.meta.url,
  ),
);
/** How long a stopped process gets to exit on SIGTERM before it is killed. */
const KILL_AFTER_MS = 5_000;
/** Lines of its log kept to explain a process that exits before it is ready. */
const KEPT_LINES = 20;

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
}

/** Children that end with this process (`endsWithUs`), each with what it leaves to remove. */
const endingWithUs = new Map<ChildProcess, (() => void) | undefined>();

function endThemAll(): void {
  for (const [child, cleanup] of endingWithUs) {
    // SIGTERM, not SIGKILL: maitred's launcher, on a Node that runs no TypeScript itself, passes
    // it on to the router it started; a SIGKILL would leave that router running.
    child.kill("SIGTERM");
    cleanup?.();
  }
}

/**
 * A child that ends with this process: when the driver exits (a finished run, an error, a
 * signal the driver turns into an exit), the child is sent SIGTERM and `cleanup` runs, so no
 * router or engine a benchmark started outlives it holding its port and its CPU. A child that
 * exits (or fails to start) first is forgotten. One exit hook serves every child.
 */
export function endsWithUs<C extends ChildProcess>(child: C, cleanup?: () => void): C {
  if (endingWithUs.size === 0) process.once("exit", endThemAll);
  endingWithUs.set(child, cleanup);
  const forget = () => {
    endingWithUs.delete(child);
    if (endingWithUs.size === 0) process.removeListener("exit", endThemAll);
  };
  child.once("exit", forget);
  child.once("error", forget);
  return child;
}

/** SIGTERM, then SIGKILL if the child has not exited within KILL_AFTER_MS. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS);
  await exited(child);
  clearTimeout(timer);
}

/**
 * Run `maitred <args>` until it logs `readyMsg` (the `msg` of a JSON log line with a url).
 * `onLine` sees every line it logs, before and after it is ready (the soak reads the access
 * log this way).
 */
export function startMaitredProcess(
  args: readonly string[],
  readyMsg: string,
  env: NodeJS.ProcessEnv = process.env,
  onLine?: (line: string) => void,
): Promise<MaitredProcess> {
  const child = endsWithUs(
    spawn(process.execPath, [MAIN, ...args], {
      stdio: ["ignore", "ignore", "pipe"],
      env,
    }),
  );
  const close = () => stopProcess(child);
  return new Promise((resolve, reject) => {
    const recent: string[] = [];
    let ready = false;
    const lines = createInterface({ input: child.stderr as NodeJS.ReadableStream });
    lines.on("line", (line) => {
      onLine?.(line);
      if (ready) return; // keep draining so the child never blocks on a full pipe
      recent.push(line);
      if (recent.length > KEPT_LINES) recent.shift();
      let rec: { msg?: unknown; url?: unknown };
      try {
        rec = JSON.parse(line);
      } catch {
        return;
      }
      if (rec.msg === readyMsg && typeof rec.url === "string") {
        ready = true;
        resolve({
          url: rec.url,
          pid: child.pid as number,
          close,
          kill: async () => {
            if (child.exitCode !== null || child.signalCode !== null) return;
            child.kill("SIGKILL");
            await exited(child);
          },
        });
      }
    });
    child.once("error", (err) => reject(err));
    child.once("exit", (code, signal) => {
      if (ready) return;
      reject(
        new Error(
          `maitred ${args[0]} exited (${signal ?? code}) before it was ready:\n${recent.join("\n")}`,
        ),
      );
    });
  });
}

/** A process serving HTTP whose CPU time the benchmarks read (a router, a relay). */
export interface RouterProcess {
  url: string;
  pid: number;
  /** CPU seconds the process has used so far. */
  cpuSeconds(): number;
  close(): Promise<void>;
}

export interface ServeOptions {
  /** The port to listen on; 0 (the default): any free port. */
  port?: number;
  /** Node writes the process's CPU profile into this directory when it exits. */
  cpuProfileDir?: string;
  /** The process's environment; this process's by default. */
  env?: NodeJS.ProcessEnv;
  /** Every line the router logs (startMaitredProcess). */
  onLine?: (line: string) => void;
}

/**
 * `maitred serve <args>` on loopback, as users start it; ready once it logs its listening line,
 * which is logged at info (hence `--log-level info`; the rest of the log is drained). Every
 * script that runs a router as its own process starts it here, so each one's router is started
 * the same way.
 */
export async function startServeProcess(
  args: readonly string[],
  options: ServeOptions = {},
): Promise<MaitredProcess & RouterProcess> {
  const { port = 0, cpuProfileDir, env: base = process.env } = options;
  // Through NODE_OPTIONS (kept as the user set it, the directory quoted) because the process is
  // started by the same launcher as every other maitred process, which passes no Node flags.
  const profiling = `--cpu-prof --cpu-prof-dir=${JSON.stringify(cpuProfileDir)}`;
  const env =
    cpuProfileDir === undefined
      ? base
      : { ...base, NODE_OPTIONS: `${base.NODE_OPTIONS ?? ""} ${profiling}`.trim() };
  const p = await startMaitredProcess(
    ["serve", "--host", "127.0.0.1", "--port", String(port), "--log-level", "info", ...args],
    "maitred listening",
    env,
    options.onLine,
  );
  return { ...p, cpuSeconds: () => processCpuSeconds(p.pid) };
}

/**
 * `maitred serve` on a free loopback port in front of `sim:2`, with a small YAML config of its
 * own (the simulated backends' KV size and time scale, the tick): what the checks in scripts/
 * run their workloads against. The config file goes when the process is closed.
 */
export async function startSmallServe(
  numGpuBlocks: number,
  timeScale: number,
  extraArgs: readonly string[] = [],
): Promise<MaitredProcess> {
  const dir = mkdtempSync(join(tmpdir(), "maitred-serve-"));
  const yaml = join(dir, "maitred.yaml");
  writeFileSync(
    yaml,
    `sim:\n  num-gpu-blocks: ${numGpuBlocks}\n  time-scale: ${timeScale}\nscheduler-interval: 1\n`,
  );
  const args = ["serve", "--backends", "sim:2", "--host", "127.0.0.1", "--port", "0"];
  try {
    const p = await startMaitredProcess(
      [...args, "--log-level", "info", "--config", yaml, ...extraArgs],
      "maitred listening",
    );
    return {
      ...p,
      async close() {
        await p.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
