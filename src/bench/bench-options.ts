/**
 * The settings of `maitred bench` and `maitred bench compare`, declared once
 * (src/config/setting.ts) and read in one place: each error is a ConfigError naming the
 * setting and its flag (CLI exit 2).
 */
import { z } from "zod";
import { readSettings, type Setting, setting } from "../config/setting.ts";
import {
  duration,
  httpUrl,
  integer,
  listOf,
  oneOf,
  positive,
  share,
  text,
} from "../config/values.ts";
import { ConfigError } from "../errors.ts";
import { simSetting } from "../sim-server/options.ts";
import { WORKLOAD_SETTINGS, workloadSpecOf } from "../workload/workload-settings.ts";
import { BENCH_APIS } from "./api-request.ts";
import { COMPARE_MODES, type CompareMode } from "./compare.ts";
import type { BenchSettings } from "./run-bench.ts";

/** Within ThunderAgent's 24–128 range; fills one default simulated H100 at mid-life. */
export const DEFAULT_CONCURRENCY = 32;
export const DEFAULT_URL = "http://127.0.0.1:8000";
const MAX_CONCURRENCY = 100_000;
const MAX_INT = 2 ** 31 - 1;

/** Settings that write a report file, as bench, compare and simulate name them. */
export const REPORT_SETTINGS = {
  json: setting({ key: "json", arg: "<file>", help: "write the report as JSON", schema: text() }),
  svg: setting({
    key: "svg",
    arg: "<file>",
    help: "write a bar chart of steps/min and p95 step latency",
    schema: text(),
  }),
  html: setting({
    key: "html",
    arg: "<file>",
    help: "write a self-contained page: run table, steps/min, step-latency CDF, KV usage per backend over time (read from /metrics: the target's, or compare's simulated backends'), pause timeline per program",
    schema: text(),
  }),
} satisfies Record<string, Setting<unknown>>;

/** Settings of every bench run, on `bench` and read by `bench compare` too. */
export const COMMON_BENCH_SETTINGS = {
  ...WORKLOAD_SETTINGS,
  classMix: {
    ...WORKLOAD_SETTINGS.classMix,
    help: "priority class per program, sent as x-priority, drawn by seed from weights, e.g. interactive=0.2,bulk=0.8 (programs of a mix component with @class keep it)",
  },
  concurrency: setting({
    key: "concurrency",
    arg: "<n>",
    help: "programs in flight",
    default: DEFAULT_CONCURRENCY,
    schema: integer(1, MAX_CONCURRENCY),
  }),
  timeScale: setting({
    key: "time-scale",
    arg: "<S>",
    help: "divide tool times (and simulated engines' time) by S",
    default: 1,
    schema: positive(),
  }),
  // A short warm-up and window; ThunderAgent used 10 + 60 min on real hardware.
  warmup: setting({
    key: "warmup",
    arg: "<duration>",
    help: "time before the steady window",
    defaultText: "30s, or 0 with --programs alone",
    schema: duration({ allowZero: true }),
  }),
  duration: setting({
    key: "duration",
    arg: "<duration>",
    help: "steady window",
    defaultText: "120s, or until the batch ends with --programs alone",
    schema: duration(),
  }),
  programs: setting({
    key: "programs",
    arg: "<n>",
    help: "run a fixed batch of n programs and stop when all have ended; the report gives the batch's makespan (no window unless --duration, which may stop it first)",
    schema: integer(1, MAX_INT),
  }),
  maxContext: setting({
    key: "max-context",
    arg: "<tokens>",
    help: "end programs before a call longer than this",
    defaultText: "the served max_model_len",
    schema: integer(2, MAX_INT),
  }),
  streamShare: setting({
    key: "stream-share",
    arg: "<share>",
    help: "share of programs whose requests stream (0..1); the others send plain JSON requests, as most agent harnesses do, and have no TTFT",
    default: 1,
    schema: share(),
  }),
  stream: setting({
    key: "stream",
    help: "no program streams (--stream-share 0)",
    default: true,
    negatable: true,
    schema: z.boolean(),
  }),
  api: setting({
    key: "api",
    arg: "<api>",
    help: "the API each step is sent in: chat (chat completions), messages (Anthropic Messages, as Claude Code) or responses (OpenAI Responses, as Codex)",
    default: "chat",
    schema: oneOf(BENCH_APIS),
  }),
  ...REPORT_SETTINGS,
  progress: setting({
    key: "progress",
    help: "no progress bar",
    default: true,
    negatable: true,
    schema: z.boolean(),
  }),
} satisfies Record<string, Setting<unknown>>;

const DEFAULT_WARMUP_MS = 30_000;
const DEFAULT_DURATION_MS = 120_000;

export interface CommonBenchOptions extends BenchSettings {
  json?: string;
  svg?: string;
  html?: string;
  progress: boolean;
}

/**
 * How long a run lasts, for bench and simulate alike: a warm-up then a steady window, or with
 * `--programs` alone the whole fixed batch (no warm-up: every program of the batch counts) until
 * its last program ends. Given both, the run stops at whichever comes first.
 */
export function runBounds(
  v: { warmup?: number; duration?: number; programs?: number },
  defaults: { warmupMs: number; durationMs: number },
): { warmupMs: number; durationMs?: number; maxPrograms?: number } {
  const windowless = v.programs !== undefined && v.duration === undefined;
  return {
    warmupMs: v.warmup ?? (v.programs === undefined ? defaults.warmupMs : 0),
    durationMs: windowless ? undefined : (v.duration ?? defaults.durationMs),
    maxPrograms: v.programs,
  };
}

export function resolveCommonFlags(flags: Record<string, unknown>): CommonBenchOptions {
  const v = readSettings(COMMON_BENCH_SETTINGS, flags);
  if (flags.stream === false && flags.streamShare !== undefined) {
    throw new ConfigError("stream-share", "cannot be combined with --no-stream");
  }
  return {
    workload: workloadSpecOf(v, v.maxContext),
    concurrency: v.concurrency,
    timeScale: v.timeScale,
    ...runBounds(v, { warmupMs: DEFAULT_WARMUP_MS, durationMs: DEFAULT_DURATION_MS }),
    streamShare: v.stream === false ? 0 : v.streamShare,
    api: v.api,
    json: v.json,
    svg: v.svg,
    html: v.html,
    progress: v.progress,
  };
}

export const BENCH_SETTINGS = {
  url: setting({
    key: "url",
    arg: "<url>",
    help: `target base URL (default: ${DEFAULT_URL}); with compare: an extra URL to run too (repeatable)`,
    repeatable: true,
    // The base URL: a trailing /v1 is the API's, not the server's (its /metrics is beside it).
    schema: z
      .preprocess((v) => (typeof v === "string" ? [v] : v), z.array(httpUrl()))
      .transform((urls) => urls.map((u) => u.replace(/\/v1$/, ""))),
  }),
  model: setting({
    key: "model",
    arg: "<name>",
    help: "model to request",
    defaultText: "the first one /v1/models lists",
    schema: text(),
  }),
  label: setting({
    key: "label",
    arg: "<name>",
    help: "name of this run in the report",
    defaultText: "the URL",
    schema: text(),
  }),
} satisfies Record<string, Setting<unknown>>;

export function resolveBenchFlags(flags: Record<string, unknown>) {
  const v = readSettings(BENCH_SETTINGS, flags);
  if ((v.url?.length ?? 0) > 1) {
    throw new ConfigError("url", "bench takes one --url (compare takes several)");
  }
  const url = v.url?.[0] ?? DEFAULT_URL;
  return { ...resolveCommonFlags(flags), url, model: v.model, label: v.label ?? url };
}

export const COMPARE_SETTINGS = {
  numBackends: setting({
    key: "num-backends",
    arg: "<n>",
    help: "simulated backends per mode",
    default: 1,
    schema: integer(1, 64),
  }),
  numGpuBlocks: setting({
    key: "num-gpu-blocks",
    arg: "<n>",
    help: "KV blocks per simulated backend",
    defaultText: "the profile's",
    schema: integer(2, MAX_INT),
  }),
  profile: setting({
    key: "profile",
    arg: "<name>",
    help: `the simulated backends' ${simSetting("profile").help}`,
    defaultText: "the simulated backend's",
    schema: simSetting("profile").schema as z.ZodType<string>,
  }),
  kvOffloadingSize: {
    ...simSetting("kv-offloading-size"),
    help: "host memory for KV per simulated backend, in GiB (vLLM's native CPU offloading; 0 = no host tier); tr is told the profile's KV bytes per token to size it",
  },
  modes: setting({
    key: "modes",
    arg: "<list>",
    help: `comma list of ${COMPARE_MODES.join(", ")}`,
    default: "default,tr",
    schema: listOf(COMPARE_MODES),
  }),
} satisfies Record<string, Setting<unknown>>;

export function resolveCompareFlags(flags: Record<string, unknown>) {
  const v = readSettings(COMPARE_SETTINGS, flags);
  const { url, model } = readSettings(
    { url: BENCH_SETTINGS.url, model: BENCH_SETTINGS.model },
    flags,
  );
  return {
    ...resolveCommonFlags(flags),
    numBackends: v.numBackends,
    numGpuBlocks: v.numGpuBlocks,
    profile: v.profile,
    kvOffloadingSize: v.kvOffloadingSize as number,
    modes: v.modes as CompareMode[],
    extraUrls: url ?? [],
    model,
  };
}
