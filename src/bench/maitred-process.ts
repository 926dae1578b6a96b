import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

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

/** SIGTERM, then SIGKILL if the child has not exited within KILL_AFTER_MS. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS);
  await exited(child);
  clearTimeout(timer);
}

/** Run `maitred <args>` until it logs `readyMsg` (the `msg` of a JSON log line with a url). */
export function startMaitredProcess(
  args: readonly string[],
  readyMsg: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<MaitredProcess> {
  const child = spawn(process.execPath, [MAIN, ...args], {
    stdio: ["ignore", "ignore", "pipe"],
    env,
  });
  const close = () => stopProcess(child);
  return new Promise((resolve, reject) => {
    const recent: string[] = [];
    let ready = false;
    const lines = createInterface({ input: child.stderr as NodeJS.ReadableStream });
    lines.on("line", (line) => {
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
