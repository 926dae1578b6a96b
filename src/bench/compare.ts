import { DEFAULT_PROFILE, TIMING_PROFILES } from "../engine/timing.ts";
import { ConfigError } from "../errors.ts";
import { discoverModel } from "./discover-model.ts";
import { type MaitredProcess, startMaitredProcess } from "./maitred-process.ts";
import type { RunReport } from "./report.ts";
import { type BenchSettings, runBenchAt } from "./run-bench.ts";

/**
 * `maitred bench compare`: the same workload against each system in turn, from one driver, so
 * the ratios are meaningful on a noisy machine. Every router mode gets fresh simulated
 * backends, so no run inherits another's warm cache; routers and backends run as their own
 * processes (`maitred serve`, `maitred sim-backend`), as users run them and as any extra
 * `--url` runs, so no system under test shares the driver's CPU time; `direct` sends
 * straight to a single backend (vLLM alone).
 */

export const COMPARE_MODES = ["default", "tr", "direct"] as const;
export type CompareMode = (typeof COMPARE_MODES)[number];

export interface RunningRouter {
  url: string;
  close(): Promise<void>;
}

/** Starts a router in `mode` in front of `backends` (injected: the router is another module). */
export type RouterStarter = (
  mode: "default" | "tr",
  backends: string[],
  timeScale: number,
) => Promise<RunningRouter>;

export interface CompareOptions extends BenchSettings {
  numBackends: number;
  numGpuBlocks?: number;
  profile?: string;
  modes: readonly CompareMode[];
  /** Extra OpenAI-compatible URLs run with the same workload (another router, a real vLLM). */
  extraUrls: readonly string[];
  /** Model for the extra URLs; discovered from each URL when absent. */
  model?: string;
  progress: boolean;
  startRouter: RouterStarter;
  /** Called after each run (print as you go). */
  onRun?: (report: RunReport) => void;
}

/** Block size of the simulated backends (vLLM's default). */
const BLOCK_SIZE = 16;

function simArgs(o: CompareOptions, index: number): string[] {
  const profile = o.profile ?? DEFAULT_PROFILE;
  const maxLen = TIMING_PROFILES[profile]?.maxModelLen;
  // A small --num-gpu-blocks (to force thrashing) must still hold one full context.
  const capacity = o.numGpuBlocks === undefined ? undefined : (o.numGpuBlocks - 1) * BLOCK_SIZE;
  const args = [
    "sim-backend",
    "--host",
    "127.0.0.1",
    "--port",
    "0",
    "--time-scale",
    String(o.timeScale),
    "--profile",
    profile,
    "--block-size",
    String(BLOCK_SIZE),
    "--enable-prompt-tokens-details",
    "--seed",
    String(index),
    "--log-level",
    "info", // the listening line; the driver drains the rest
  ];
  if (o.numGpuBlocks !== undefined) args.push("--num-gpu-blocks", String(o.numGpuBlocks));
  if (capacity !== undefined && maxLen !== undefined && capacity < maxLen) {
    args.push("--max-model-len", String(capacity));
  }
  return args;
}

async function startBackends(o: CompareOptions): Promise<MaitredProcess[]> {
  const started: MaitredProcess[] = [];
  try {
    for (let i = 0; i < o.numBackends; i++) {
      started.push(await startMaitredProcess(simArgs(o, i), "sim-backend listening"));
    }
  } catch (err) {
    await Promise.all(started.map((b) => b.close()));
    throw err;
  }
  return started;
}

export async function runCompare(o: CompareOptions): Promise<RunReport[]> {
  if (o.modes.includes("direct") && o.numBackends !== 1) {
    throw new ConfigError("--modes", "`direct` needs --num-backends 1 (it bypasses any router)");
  }
  const reports: RunReport[] = [];
  const run = async (label: string, url: string, model: string, maxLen: number | null) => {
    const { report } = await runBenchAt(o, {
      label,
      url,
      model,
      maxModelLen: maxLen,
      programIdPrefix: `${label}-`,
    });
    reports.push(report);
    o.onRun?.(report);
  };
  for (const mode of o.modes) {
    const backends = await startBackends(o);
    try {
      const served = await discoverModel(backends[0].url);
      if (served === null) throw new Error(`simulated backend ${backends[0].url} lists no model`);
      const { id: model, maxModelLen } = served;
      if (mode === "direct") await run(mode, backends[0].url, model, maxModelLen);
      else {
        const router = await o.startRouter(
          mode,
          backends.map((b) => b.url),
          o.timeScale,
        );
        try {
          await run(mode, router.url, model, maxModelLen);
        } finally {
          await router.close();
        }
      }
    } finally {
      await Promise.all(backends.map((b) => b.close()));
    }
  }
  for (const url of o.extraUrls) {
    const served = await discoverModel(url);
    const model = o.model ?? served?.id;
    if (!model)
      throw new ConfigError("--model", `cannot discover the model served at ${url}; pass --model`);
    await run(url, url, model, served?.maxModelLen ?? null);
  }
  return reports;
}
