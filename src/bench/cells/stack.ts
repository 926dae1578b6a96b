/**
 * The processes of `npm run bench:cells`, each started as users start it and registered to be
 * stopped: simulated backends as `bench compare` starts its own, and cells, each a
 * `maitred serve --router tr` with the router's times scaled as `bench compare` scales them.
 */
import { resolveRouterConfig } from "../../config/load-config.ts";
import type { RouterConfig } from "../../config/router-config.ts";
import { simBackendArgs, simBackendSettings } from "../compare.ts";
import { type MaitredProcess, startMaitredProcess, startServeProcess } from "../maitred-process.ts";
import { scaledTimeFlags, scaleRouterTimes } from "../start-router-for.ts";
import type { Closers } from "./closers.ts";
import type { CellsSettings } from "./spec.ts";
import { BACKENDS_PER_CELL, CELLS } from "./stack-shape.ts";

/**
 * Whether each `serve` is told its cell name (`--cell`): it only labels request ids, metrics,
 * logs and /health, so a `serve` that predates the flag can be run with this off.
 */
const PASS_CELL_FLAG = true;

export interface Proc {
  url: string;
  pid: number;
  close(): Promise<void>;
  /** SIGKILL. */
  kill(): Promise<void>;
}

export interface CellsStack {
  /** The cells' router settings (its `--max-pause` bounds how long a request may be held). */
  routerConfig: RouterConfig;
  /** The `index`-th simulated backend. */
  startBackend(index: number): Promise<Proc>;
  /** A cell named `name` in front of `backendUrls`, on `port` (0: any free one). */
  startCell(name: string, backendUrls: readonly string[], port: number): Promise<Proc>;
}

export function cellsStack(
  s: Pick<CellsSettings, "timeScale" | "numGpuBlocks" | "profile">,
  closers: Closers,
): CellsStack {
  const owned = (p: MaitredProcess): Proc => {
    const close = closers.own(() => p.close());
    return {
      url: p.url,
      pid: p.pid,
      close,
      kill: async () => {
        await p.kill();
        await close();
      },
    };
  };
  const routerConfig = scaleRouterTimes(
    resolveRouterConfig({
      flags: { router: "tr", backends: "http://127.0.0.1:1", host: "127.0.0.1", port: "0" },
      env: process.env,
    }),
    s.timeScale,
  );
  return {
    routerConfig,
    async startBackend(index) {
      const settings = simBackendSettings(s, index);
      return owned(
        await startMaitredProcess(
          ["sim-backend", ...simBackendArgs(settings), "--log-level", "info"],
          "sim-backend listening",
        ),
      );
    },
    async startCell(name, backendUrls, port) {
      return owned(
        await startServeProcess(
          [
            "--router",
            "tr",
            "--backends",
            backendUrls.join(","),
            ...scaledTimeFlags(routerConfig),
            ...(PASS_CELL_FLAG ? ["--cell", name] : []),
          ],
          { port },
        ),
      );
    },
  };
}

/** Two backends per cell, in cell order; `urls[c]` are cell c's. */
export async function startCellBackends(stack: CellsStack) {
  const backends: Proc[] = [];
  const urls: string[][] = [];
  for (let c = 0; c < CELLS.length; c++) {
    const mine: string[] = [];
    for (let j = 0; j < BACKENDS_PER_CELL; j++) {
      const b = await stack.startBackend(c * BACKENDS_PER_CELL + j);
      backends.push(b);
      mine.push(b.url);
    }
    urls.push(mine);
  }
  return { backends, urls };
}
