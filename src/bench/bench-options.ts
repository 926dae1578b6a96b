import {
  parseDurationMs,
  parseInteger,
  parseList,
  parseNumber,
  parseString,
  type ValueSource,
} from "../config/parse-value.ts";
import { ConfigError } from "../errors.ts";
import { parseClassMix } from "../workload/class-mix.ts";
import { DEFAULT_WORKLOAD, parseWorkloadArg } from "../workload/load-workload.ts";
import { parseToolTimeScale } from "../workload/tool-time-scale.ts";
import { DEFAULT_SEED, DEFAULT_STAGGER_MS } from "../workload/workload.ts";
import { COMPARE_MODES, type CompareMode } from "./compare.ts";
import type { BenchSettings } from "./run-bench.ts";

/**
 * Flags of `maitred bench` and `maitred bench compare`, validated in one place: each error is
 * a ConfigError naming the flag (CLI exit 2).
 */

/** Within ThunderAgent's 24–128 range; fills one default simulated H100 at mid-life. */
export const DEFAULT_CONCURRENCY = 32;
/** A short warm-up and window; ThunderAgent used 10 + 60 min on real hardware. */
export const DEFAULT_WARMUP = "30s";
export const DEFAULT_DURATION = "120s";
export const DEFAULT_URL = "http://127.0.0.1:8000";
const MAX_CONCURRENCY = 100_000;
const MAX_INT = 2 ** 31 - 1;

export interface CommonBenchFlags {
  workload?: string;
  concurrency?: string;
  timeScale?: string;
  toolTimeScale?: string;
  warmup?: string;
  duration?: string;
  programs?: string;
  seed?: string;
  stagger?: string;
  maxContext?: string;
  classMix?: string;
  streamShare?: string;
  /** commander's `--no-stream`: false = no program streams. */
  stream?: boolean;
  json?: string;
  svg?: string;
  html?: string;
  progress?: boolean;
}

export interface CommonBenchOptions extends BenchSettings {
  json?: string;
  svg?: string;
  html?: string;
  progress: boolean;
}

const src = (flag: string): ValueSource => ({ field: `--${flag}`, origin: `--${flag}` });

/** `--stream-share` (0..1), or 0 with `--no-stream`; default 1 (every program streams). */
function streamShareOf(f: CommonBenchFlags): number {
  if (f.stream === false) {
    if (f.streamShare !== undefined) {
      throw new ConfigError("--stream-share", "cannot be combined with --no-stream");
    }
    return 0;
  }
  if (f.streamShare === undefined) return 1;
  const share = parseNumber(f.streamShare, src("stream-share"));
  if (!(share >= 0 && share <= 1)) {
    throw new ConfigError("--stream-share", `must be between 0 and 1, got ${f.streamShare}`);
  }
  return share;
}

export function resolveCommonFlags(f: CommonBenchFlags): CommonBenchOptions {
  const seed = f.seed === undefined ? DEFAULT_SEED : parseInteger(f.seed, src("seed"), 0, MAX_INT);
  const staggerMs =
    f.stagger === undefined ? DEFAULT_STAGGER_MS : parseDurationMs(f.stagger, src("stagger"), true);
  const maxContextTokens =
    f.maxContext === undefined
      ? undefined
      : parseInteger(f.maxContext, src("max-context"), 2, MAX_INT);
  const timeScale = f.timeScale === undefined ? 1 : parseNumber(f.timeScale, src("time-scale"));
  if (!(timeScale > 0)) throw new ConfigError("--time-scale", `must be > 0, got ${f.timeScale}`);
  const maxPrograms =
    f.programs === undefined ? undefined : parseInteger(f.programs, src("programs"), 1, MAX_INT);
  // With --programs alone the run lasts until those programs end; otherwise a window.
  const duration = f.duration ?? (maxPrograms === undefined ? DEFAULT_DURATION : undefined);
  const common = { seed, staggerMs, ...(maxContextTokens ? { maxContextTokens } : {}) };
  const workload = parseWorkloadArg(f.workload ?? DEFAULT_WORKLOAD, common);
  if (f.classMix !== undefined) workload.classMix = parseClassMix(f.classMix);
  if (f.toolTimeScale !== undefined) workload.toolTimeScale = parseToolTimeScale(f.toolTimeScale);
  return {
    workload,
    concurrency:
      f.concurrency === undefined
        ? DEFAULT_CONCURRENCY
        : parseInteger(f.concurrency, src("concurrency"), 1, MAX_CONCURRENCY),
    timeScale,
    warmupMs: parseDurationMs(
      f.warmup ?? (maxPrograms === undefined ? DEFAULT_WARMUP : "0"),
      src("warmup"),
      true,
    ),
    durationMs: duration === undefined ? undefined : parseDurationMs(duration, src("duration")),
    maxPrograms,
    streamShare: streamShareOf(f),
    json: f.json,
    svg: f.svg,
    html: f.html,
    progress: f.progress !== false,
  };
}

export interface BenchFlags extends CommonBenchFlags {
  url?: string;
  model?: string;
  label?: string;
}

export function resolveBenchFlags(f: BenchFlags) {
  const url = parseUrl(f.url ?? DEFAULT_URL, "url");
  return {
    ...resolveCommonFlags(f),
    url,
    model: f.model === undefined ? undefined : parseString(f.model, src("model")),
    label: f.label ?? url,
  };
}

export interface CompareFlags extends CommonBenchFlags {
  numBackends?: string;
  numGpuBlocks?: string;
  profile?: string;
  modes?: string;
  url?: string[];
  model?: string;
}

export function resolveCompareFlags(f: CompareFlags) {
  const modes = parseList(f.modes ?? "default,tr", src("modes"));
  for (const m of modes) {
    if (!(COMPARE_MODES as readonly string[]).includes(m)) {
      throw new ConfigError("--modes", `unknown mode "${m}"; expected ${COMPARE_MODES.join(", ")}`);
    }
  }
  return {
    ...resolveCommonFlags(f),
    numBackends:
      f.numBackends === undefined ? 1 : parseInteger(f.numBackends, src("num-backends"), 1, 64),
    numGpuBlocks:
      f.numGpuBlocks === undefined
        ? undefined
        : parseInteger(f.numGpuBlocks, src("num-gpu-blocks"), 2, MAX_INT),
    profile: f.profile,
    modes: modes as CompareMode[],
    extraUrls: (f.url ?? []).map((u) => parseUrl(u, "url")),
    model: f.model,
  };
}

function parseUrl(raw: string, flag: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(`--${flag}`, `not a URL: ${JSON.stringify(raw)}`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new ConfigError(`--${flag}`, `must be http(s), got ${u.protocol}`);
  }
  return raw.replace(/\/+$/, "");
}
