import { DEFAULT_PROFILE, TIMING_PROFILES } from "../engine/timing.ts";
import { ConfigError } from "../errors.ts";
import { wallClock } from "../runtime/clock.ts";
import { discoverModel } from "./discover-model.ts";
import { startEngineWindow } from "./engine-window.ts";
import { type KvSeries, startKvSampler } from "./kv-sampler.ts";
import { startMaitredProcess } from "./maitred-process.ts";
import type { RunRecords } from "./records.ts";
import type { RunReport } from "./report.ts";
import { type BenchSettings, runBenchAt } from "./run-bench.ts";

/**
 * `maitred bench compare`: the same workload against each system in turn, from one driver, so
 * the ratios are meaningful on a noisy machine. Every router mode gets fresh simulated
 * backends, so no run inherits another's warm cache; routers and backends run as their own
 * processes (`maitred serve`, `maitred sim-backend`), as users run them and as any extra
 * `--url` runs, so no system under test shares the driver's CPU time; `direct` sends
 * straight to a single backend (vLLM alone). How routers and backends are started is
 * injected, so tests can run them in the driver's process, on the driver's clock.
 */

export const COMPARE_MODES = ["default", "tr", "direct"] as const;
export type CompareMode = (typeof COMPARE_MODES)[number];

/** A router or backend started for a run: where it listens, and how to stop it. */
export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Starts a router in `mode` in front of `backends` (injected: the router is another module).
 * `kvBytesPerToken` is the served model's, given when the backends have a host KV tier, so the
 * router can size it as a user would tell it to (`--kv-bytes-per-token`).
 */
export type RouterStarter = (
  mode: "default" | "tr",
  backends: string[],
  timeScale: number,
  kvBytesPerToken: number | null,
) => Promise<RunningServer>;

/**
 * The settings of one simulated backend of a run, as `maitred sim-backend` takes them (camel
 * case here, kebab-case flags on its command line).
 */
export interface SimBackendSettings {
  host: string;
  port: number;
  timeScale: number;
  profile: string;
  blockSize: number;
  enablePromptTokensDetails: boolean;
  seed: number;
  numGpuBlocks?: number;
  maxModelLen?: number;
  /** Host KV tier in GiB (vLLM's `--kv-offloading-size`); absent or 0: none. */
  kvOffloadingSize?: number;
}

/** Starts one simulated backend (injected like the router; default: its own process). */
export type BackendStarter = (settings: SimBackendSettings) => Promise<RunningServer>;

export interface CompareOptions extends BenchSettings {
  numBackends: number;
  numGpuBlocks?: number;
  profile?: string;
  /** Host KV tier per simulated backend, GiB (0: none). */
  kvOffloadingSize?: number;
  modes: readonly CompareMode[];
  /** Extra OpenAI-compatible URLs run with the same workload (another router, a real vLLM). */
  extraUrls: readonly string[];
  /** Model for the extra URLs; discovered from each URL when absent. */
  model?: string;
  progress: boolean;
  startRouter: RouterStarter;
  /** Default: `maitred sim-backend` as its own process (startBackendProcess). */
  startBackend?: BackendStarter;
  /** Called after each run (print as you go; keep the records for a report). */
  onRun?: (report: RunReport, records: RunRecords, kv: KvSeries | null) => void;
  /** Sample the simulated backends' KV usage once a second during each run (`--html`). */
  sampleKv?: boolean;
}

/** Block size of the simulated backends (vLLM's default). */
const BLOCK_SIZE = 16;

/** The settings of the `index`-th simulated backend of each mode. */
export function simBackendSettings(
  o: Pick<CompareOptions, "profile" | "numGpuBlocks" | "timeScale" | "kvOffloadingSize">,
  index: number,
): SimBackendSettings {
  const profile = o.profile ?? DEFAULT_PROFILE;
  const maxLen = TIMING_PROFILES[profile]?.maxModelLen;
  // A small --num-gpu-blocks (to force thrashing) must still hold one full context.
  const capacity = o.numGpuBlocks === undefined ? undefined : (o.numGpuBlocks - 1) * BLOCK_SIZE;
  return {
    host: "127.0.0.1",
    port: 0,
    timeScale: o.timeScale,
    profile,
    blockSize: BLOCK_SIZE,
    enablePromptTokensDetails: true,
    seed: index,
    ...(o.numGpuBlocks === undefined ? {} : { numGpuBlocks: o.numGpuBlocks }),
    ...(o.kvOffloadingSize ? { kvOffloadingSize: o.kvOffloadingSize } : {}),
    ...(capacity !== undefined && maxLen !== undefined && capacity < maxLen
      ? { maxModelLen: capacity }
      : {}),
  };
}

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** `maitred sim-backend` flags for `settings`: a value flag each, a bare flag for true. */
export function simBackendArgs(settings: SimBackendSettings): string[] {
  const args: string[] = [];
  for (const [key, value] of Object.entries(settings)) {
    if (value === false || value === undefined) continue;
    args.push(`--${kebab(key)}`);
    if (value !== true) args.push(String(value));
  }
  return args;
}

/** `maitred sim-backend` as its own process, as users run it. */
export const startBackendProcess: BackendStarter = (settings) =>
  startMaitredProcess(
    // The listening line is logged at info; the driver reads it, then drains the rest.
    ["sim-backend", ...simBackendArgs(settings), "--log-level", "info"],
    "sim-backend listening",
  );

async function startBackends(o: CompareOptions): Promise<RunningServer[]> {
  const start = o.startBackend ?? startBackendProcess;
  const started: RunningServer[] = [];
  try {
    for (let i = 0; i < o.numBackends; i++) started.push(await start(simBackendSettings(o, i)));
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
  const kvBytesPerToken = TIMING_PROFILES[o.profile ?? DEFAULT_PROFILE]?.kvBytesPerToken ?? null;
  const run = async (
    label: string,
    url: string,
    model: string,
    maxLen: number | null,
    backendUrls: readonly string[] = [],
  ) => {
    const sampler =
      o.sampleKv && backendUrls.length > 0 ? startKvSampler(backendUrls, o.clock) : null;
    const engine =
      backendUrls.length > 0
        ? startEngineWindow(backendUrls, o.clock ?? wallClock, o.warmupMs)
        : null;
    let result: Awaited<ReturnType<typeof runBenchAt>>;
    let kv: KvSeries | null = null;
    try {
      result = await runBenchAt(o, {
        label,
        url,
        model,
        maxModelLen: maxLen,
        programIdPrefix: `${label}-`,
        onStart: () => engine?.start(),
      });
    } finally {
      kv = (await sampler?.stop()) ?? null;
    }
    if (engine !== null) result.report.engine_prompt_tokens = await engine.stop();
    reports.push(result.report);
    o.onRun?.(result.report, result.records, kv);
  };
  for (const mode of o.modes) {
    const backends = await startBackends(o);
    try {
      const served = await discoverModel(backends[0].url);
      if (served === null) throw new Error(`simulated backend ${backends[0].url} lists no model`);
      const { id: model, maxModelLen } = served;
      const urls = backends.map((b) => b.url);
      if (mode === "direct") await run(mode, backends[0].url, model, maxModelLen, urls);
      else {
        const router = await o.startRouter(
          mode,
          backends.map((b) => b.url),
          o.timeScale,
          o.kvOffloadingSize ? kvBytesPerToken : null,
        );
        try {
          await run(mode, router.url, model, maxModelLen, urls);
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
