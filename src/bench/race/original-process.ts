/**
 * The original ThunderAgent (Python) as a router a race can start: unpacked from a git snapshot
 * of its public repository into a temporary folder (never into this one), run by a Python that
 * has FastAPI, httpx and uvicorn (Debian: `apt-get install -y python3-fastapi python3-httpx
 * python3-uvicorn`, then `/usr/bin/python3`), on a free loopback port, in front of the race's
 * backends. Ready when its `/health` answers; stopped with SIGTERM, then SIGKILL, and stopped
 * (its copy removed) when the race's process exits.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RouterStarter, RunningServer } from "../compare.ts";
import { endsWithUs, stopProcess } from "../maitred-process.ts";

export interface OriginalSettings {
  /** The git directory of a ThunderAgent snapshot. */
  gitDir: string;
  /** A Python with FastAPI, httpx and uvicorn. */
  python: string;
}

/** How long the original gets to answer `/health` before the race gives up on it. */
const READY_WITHIN_MS = 60_000;
const POLL_MS = 250;

/** A free loopback port (the original takes a port, not 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * The original's flags for a race at `timeScale`: its tr router with its scheduler and metrics
 * periods divided by the time scale, as maitred's are (its defaults are 5 s each).
 */
export function originalArgs(port: number, backends: string[], timeScale: number): string[] {
  const period = String(5 / timeScale);
  return [
    "-m",
    "ThunderAgent",
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--backends",
    backends.join(","),
    "--router",
    "tr",
    "--scheduler-interval",
    period,
    "--metrics",
    "--metrics-interval",
    period,
  ];
}

async function waitReady(url: string, exited: () => string | null): Promise<void> {
  const until = Date.now() + READY_WITHIN_MS;
  for (;;) {
    const gone = exited();
    if (gone !== null) throw new Error(`the original exited (${gone}) before it was ready`);
    try {
      const res = await fetch(`${url}/health`);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > until) throw new Error(`the original did not answer ${url}/health`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Starts the original in front of the backends a race hands it. */
export function originalStarter(s: OriginalSettings): RouterStarter {
  return async (_mode, backends, timeScale): Promise<RunningServer> => {
    const dir = mkdtempSync(join(tmpdir(), "thunderagent-"));
    // git's complaints about objects outside the package (a shallow snapshot) are not ours.
    const archive = execFileSync(
      "git",
      ["--git-dir", s.gitDir, "archive", "HEAD", "ThunderAgent"],
      {
        stdio: ["ignore", "pipe", "ignore"],
      },
    );
    execFileSync("tar", ["-x", "-C", dir], { input: archive });
    const port = await freePort();
    // Python does not notice its parent gone: it is stopped, and its copy removed, when the
    // race exits.
    const child = endsWithUs(
      spawn(s.python, originalArgs(port, backends, timeScale), {
        cwd: dir,
        stdio: ["ignore", "ignore", "pipe"],
      }),
      () => rmSync(dir, { recursive: true, force: true }),
    );
    // The last of its log, to say why it stopped; read on, so a full pipe never blocks it.
    let tail = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-2000);
    });
    let gone: string | null = null;
    child.once("exit", (code, signal) => {
      gone = `${signal ?? code}: ${tail.trim().split("\n").slice(-5).join(" | ")}`;
    });
    child.once("error", (err) => {
      gone = err.message;
    });
    const url = `http://127.0.0.1:${port}`;
    const close = async () => {
      await stopProcess(child);
      rmSync(dir, { recursive: true, force: true });
    };
    try {
      await waitReady(url, () => gone);
    } catch (err) {
      await close();
      throw err;
    }
    return { url, close };
  };
}
