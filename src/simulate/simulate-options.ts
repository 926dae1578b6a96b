import { DEFAULT_PRIORITY, type PriorityValue } from "../config/parse-priority.ts";
import {
  parseDurationMs,
  parseInteger,
  parseList,
  type ValueSource,
} from "../config/parse-value.ts";
import { DEFAULT_CONFIG, FIELDS, type RouterConfig } from "../config/router-config.ts";
import { DEFAULT_PROFILE, TIMING_PROFILES } from "../engine/timing.ts";
import { ConfigError } from "../errors.ts";
import { schedulerConfigOf } from "../runtime/service.ts";
import { parseClassMix } from "../workload/class-mix.ts";
import { DEFAULT_WORKLOAD, parseWorkloadArg } from "../workload/load-workload.ts";
import { parseToolTimeScale } from "../workload/tool-time-scale.ts";
import type { WorkloadSpec } from "../workload/types.ts";
import { DEFAULT_SEED, DEFAULT_STAGGER_MS } from "../workload/workload.ts";
import { engineMaxModelLen, SIM_ROUTERS, type SimRouter, type TrKnobs } from "./run-simulation.ts";

/**
 * Flags of `maitred simulate`, validated in one place (each error a ConfigError naming the
 * flag, CLI exit 2). The tr knobs are `maitred serve`'s own settings: same names, parsers and
 * defaults, read from the router's config schema (src/config/router-config.ts).
 */

/** `maitred serve` settings that shape scheduling decisions, hence also the simulation. */
export const TR_KNOB_KEYS = [
  "scheduler-interval",
  "acting-token-weight",
  "use-acting-token-decay",
  "placement",
  "max-pause",
  "idle-timeout",
  "buffer-per-program",
  "growth-headroom-steps",
  "ageing",
  "lend-after",
  "lend-max-hold",
  "progress-interval-tokens",
  "priority",
  "queue-policy",
  "priority-policy",
] as const;

/** Compare the plain proxy with tr, as `maitred bench compare` does by default. */
export const DEFAULT_ROUTERS = "default,tr";
/** ThunderAgent's mini-SWE runs used 128 workers on two DP replicas. */
export const DEFAULT_CONCURRENCY = "128";
export const DEFAULT_NUM_BACKENDS = 2;
/** ThunderAgent counts steps after a 10-minute warm-up. */
export const DEFAULT_WARMUP = "10m";
/** Warm-up + window = one simulated hour. */
export const DEFAULT_DURATION = "50m";
const MAX_CONCURRENCY = 100_000;
const MAX_BACKENDS = 64;
const MAX_INT = 2 ** 31 - 1;

export interface SimulateFlags {
  router?: string;
  numBackends?: string;
  profile?: string;
  numGpuBlocks?: string;
  concurrency?: string;
  workload?: string;
  toolTimeScale?: string;
  duration?: string;
  warmup?: string;
  seed?: string;
  stagger?: string;
  classMix?: string;
  json?: string;
  svg?: string;
  html?: string;
  /** The tr knobs, camel-cased as commander hands them over. */
  [knob: string]: unknown;
}

export interface SimulateOptions {
  routers: SimRouter[];
  concurrency: number[];
  numBackends: number;
  profile: string;
  numGpuBlocks?: number;
  workload: WorkloadSpec;
  warmupMs: number;
  durationMs: number;
  seed: number;
  schedulerIntervalMs: number;
  knobs: TrKnobs;
  json?: string;
  svg?: string;
  html?: string;
}

const src = (flag: string): ValueSource => ({ field: `--${flag}`, origin: `--${flag}` });
const camel = (key: string) => key.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

function unique<T>(values: T[], flag: string): T[] {
  if (new Set(values).size !== values.length) {
    throw new ConfigError(`--${flag}`, `lists a value twice: ${values.join(",")}`);
  }
  return values;
}

/** The tr knobs given as flags, on top of `maitred serve`'s defaults. */
export function resolveTrKnobs(flags: Record<string, unknown>): {
  knobs: TrKnobs;
  schedulerIntervalMs: number;
} {
  const config: RouterConfig = { ...DEFAULT_CONFIG };
  const target = config as unknown as Record<string, unknown>;
  for (const key of TR_KNOB_KEYS) {
    const raw = flags[camel(key)];
    if (raw === undefined) continue;
    const field = FIELDS.find((f) => f.key === key);
    if (field === undefined) throw new Error(`router config has no field ${key}`);
    const value = field.parse(raw, src(key));
    if (field.prop === "priority") {
      // `--priority` is the switch of `maitred serve`: the built-in class defaults (the
      // config file's section has no flag form).
      const p = value as PriorityValue;
      config.priority =
        p.kind === "section"
          ? p.priority
          : { ...structuredClone(DEFAULT_PRIORITY), enabled: p.enabled };
    } else target[field.prop] = value;
  }
  const { mode: _mode, ...knobs } = schedulerConfigOf(config);
  return { knobs, schedulerIntervalMs: config.schedulerIntervalMs };
}

export function resolveSimulateFlags(f: SimulateFlags): SimulateOptions {
  const routers = unique(parseList(f.router ?? DEFAULT_ROUTERS, src("router")), "router");
  for (const r of routers) {
    if (!(SIM_ROUTERS as readonly string[]).includes(r)) {
      throw new ConfigError(
        "--router",
        `unknown router "${r}"; expected ${SIM_ROUTERS.join(", ")}`,
      );
    }
  }
  const concurrency = unique(
    parseList(f.concurrency ?? DEFAULT_CONCURRENCY, src("concurrency")).map((c) =>
      parseInteger(c, src("concurrency"), 1, MAX_CONCURRENCY),
    ),
    "concurrency",
  );
  const profile = f.profile ?? DEFAULT_PROFILE;
  if (!Object.hasOwn(TIMING_PROFILES, profile)) {
    const known = Object.keys(TIMING_PROFILES).join(", ");
    throw new ConfigError("--profile", `unknown timing profile "${profile}"; known: ${known}`);
  }
  const seed = f.seed === undefined ? DEFAULT_SEED : parseInteger(f.seed, src("seed"), 0, MAX_INT);
  const staggerMs =
    f.stagger === undefined ? DEFAULT_STAGGER_MS : parseDurationMs(f.stagger, src("stagger"), true);
  const numGpuBlocks =
    f.numGpuBlocks === undefined
      ? undefined
      : parseInteger(f.numGpuBlocks, src("num-gpu-blocks"), 2, MAX_INT);
  // Programs end before a call the engines could not hold, as `maitred bench` cuts them at
  // the served max_model_len.
  const maxContextTokens = engineMaxModelLen(profile, numGpuBlocks);
  const { knobs, schedulerIntervalMs } = resolveTrKnobs(f);
  const workload = parseWorkloadArg(f.workload ?? DEFAULT_WORKLOAD, {
    seed,
    staggerMs,
    maxContextTokens,
  });
  if (f.classMix !== undefined) workload.classMix = parseClassMix(f.classMix);
  if (f.toolTimeScale !== undefined) workload.toolTimeScale = parseToolTimeScale(f.toolTimeScale);
  return {
    routers: routers as SimRouter[],
    concurrency,
    numBackends:
      f.numBackends === undefined
        ? DEFAULT_NUM_BACKENDS
        : parseInteger(f.numBackends, src("num-backends"), 1, MAX_BACKENDS),
    profile,
    numGpuBlocks,
    workload,
    warmupMs: parseDurationMs(f.warmup ?? DEFAULT_WARMUP, src("warmup"), true),
    durationMs: parseDurationMs(f.duration ?? DEFAULT_DURATION, src("duration")),
    seed,
    schedulerIntervalMs,
    knobs,
    json: f.json,
    svg: f.svg,
    html: f.html,
  };
}
