import type { z } from "zod";
import { COMMON_BENCH_SETTINGS, REPORT_SETTINGS, runBounds } from "../bench/bench-options.ts";
import { DEFAULT_PRIORITY, type PriorityValue } from "../config/priority-section.ts";
import { DEFAULT_CONFIG, ROUTER_SETTINGS, type RouterConfig } from "../config/router-config.ts";
import { schedulerConfigOf } from "../config/scheduler-settings.ts";
import {
  camel,
  parseSetting,
  readSettings,
  type Setting,
  setting,
  settingOf,
} from "../config/setting.ts";
import { settleBounds } from "../config/tail-preset.ts";
import { boolean, duration, integer, listOf, listOfItems } from "../config/values.ts";
import { prioritySchedulingOf, type SchedulingFlags } from "../engine/queue-order.ts";
import type { PriorityScheduling } from "../engine/types.ts";
import { simSetting } from "../sim-server/options.ts";
import type { WorkloadSpec } from "../workload/types.ts";
import { WORKLOAD_SETTINGS, workloadSpecOf } from "../workload/workload-settings.ts";
import {
  BATCH_HORIZON_MS,
  engineMaxModelLen,
  SIM_ROUTERS,
  type SimRouter,
  type TrKnobs,
} from "./run-simulation.ts";

/**
 * The settings of `maitred simulate`, declared once (src/config/setting.ts) and read in one
 * place (each error a ConfigError naming the setting, CLI exit 2). The tr knobs are
 * `maitred serve`'s own settings: same names, schemas and defaults.
 */

/** `maitred serve` settings that shape scheduling decisions, hence also the simulation. */
export const TR_KNOB_KEYS = [
  "scheduler-interval",
  "acting-token-weight",
  "use-acting-token-decay",
  "placement",
  "engine-order",
  "tail",
  "tier-packing",
  "max-pause",
  "idle-timeout",
  "buffer-per-program",
  "growth-headroom-steps",
  "ageing",
  "lend-after",
  "lend-max-hold",
  "final-grace",
  "progress-interval-tokens",
  "priority",
  "queue-policy",
  "priority-policy",
] as const;

/** Where serve's help says more than the simulator offers (it has no config file). */
const SIMULATE_HELP: Partial<Record<string, string>> = {
  priority: "turn on priority classes with the built-in class defaults",
};

/** The tr knobs, as `maitred serve` declares them. */
export const TR_KNOB_SETTINGS = TR_KNOB_KEYS.map((key) => {
  const s = settingOf(ROUTER_SETTINGS, key, "maitred serve");
  return { ...s, help: `${SIMULATE_HELP[key] ?? s.help}, as maitred serve` };
});

// ThunderAgent counts steps after a 10-minute warm-up; warm-up + window = one simulated hour.
const DEFAULT_WARMUP_MS = 10 * 60_000;
const DEFAULT_DURATION_MS = 50 * 60_000;
const MAX_CONCURRENCY = 100_000;
const MAX_BACKENDS = 64;
const MAX_INT = 2 ** 31 - 1;

/** A list in which each value may appear once. */
const once = <T>(schema: z.ZodType<T[], unknown>) =>
  schema.refine((v) => new Set(v).size === v.length, { error: "lists a value twice" });

export const SIMULATE_SETTINGS = {
  router: setting({
    key: "router",
    arg: "<list>",
    help: "comma list of tr, default, oracle (default router with unbounded KV: an upper bound)",
    // Compare the plain proxy with tr, as `maitred bench compare` does by default.
    default: "default,tr",
    schema: once(listOf(SIM_ROUTERS)),
  }),
  numBackends: setting({
    key: "num-backends",
    arg: "<n>",
    help: "simulated engines",
    default: 2,
    schema: integer(1, MAX_BACKENDS),
  }),
  profile: simSetting("profile"),
  numGpuBlocks: setting({
    key: "num-gpu-blocks",
    arg: "<n>",
    help: "KV blocks of 16 tokens per engine",
    defaultText: "the profile's",
    schema: integer(2, MAX_INT),
  }),
  kvOffloadingSize: {
    ...simSetting("kv-offloading-size"),
    help: "host memory for KV per engine, in GiB (vLLM's native CPU offloading; 0 = no host tier)",
  },
  schedulingPolicy: {
    ...simSetting("scheduling-policy"),
    help: "fcfs, or priority: every engine schedules by the requests' priority field with --personality's rules, as maitred sim-backend, and is declared so to the routers, which write --engine-order into each request",
  },
  personality: {
    ...simSetting("personality"),
    help: "whose priority rules the engines follow under --scheduling-policy priority: vllm or sglang",
  },
  scheduleLowPriorityValuesFirst: simSetting("schedule-low-priority-values-first"),
  prioritySchedulingPreemptionThreshold: simSetting("priority-scheduling-preemption-threshold"),
  concurrency: setting({
    key: "concurrency",
    arg: "<list>",
    help: "programs in flight; a comma list sweeps",
    // ThunderAgent's mini-SWE runs used 128 workers on two DP replicas.
    default: "128",
    schema: once(listOfItems(integer(1, MAX_CONCURRENCY))),
  }),
  ...WORKLOAD_SETTINGS,
  seed: { ...WORKLOAD_SETTINGS.seed, help: "seeds the workload and the engines" },
  warmup: setting({
    key: "warmup",
    arg: "<duration>",
    help: "simulated time before the window",
    defaultText: "10m, or 0 with --programs alone",
    schema: duration({ allowZero: true }),
  }),
  duration: setting({
    key: "duration",
    arg: "<duration>",
    help: "simulated steady window",
    defaultText: "50m, or until the batch ends with --programs alone",
    schema: duration(),
  }),
  programs: COMMON_BENCH_SETTINGS.programs,
  shadow: setting({
    key: "shadow",
    help: "beside each default run, a tr core hears the same events and engine samples and records what it would have done, as maitred serve --shadow (printed after the tables; shadow in the JSON)",
    default: false,
    schema: boolean(),
  }),
  json: {
    ...REPORT_SETTINGS.json,
    help: "write the report as JSON ({runs: [...]}, series included)",
  },
  svg: REPORT_SETTINGS.svg,
  html: {
    ...REPORT_SETTINGS.html,
    help: "write a self-contained page: run table, steps/min, step-latency CDF, KV usage per backend over time, pause timeline per program",
  },
} satisfies Record<string, Setting<unknown>>;

export interface SimulateOptions {
  routers: SimRouter[];
  concurrency: number[];
  numBackends: number;
  profile: string;
  numGpuBlocks?: number;
  /** Host KV tier per engine, GiB (0 = none). */
  kvOffloadingSize: number;
  /** The engines' priority scheduling; absent: first come, first served. */
  priorityScheduling?: PriorityScheduling;
  workload: WorkloadSpec;
  warmupMs: number;
  /** With `--programs` alone: BATCH_HORIZON_MS, a window the batch ends within. */
  durationMs: number;
  /** The fixed batch (`--programs`): the run stops when its last program has ended. */
  maxPrograms?: number;
  seed: number;
  schedulerIntervalMs: number;
  knobs: TrKnobs;
  /** `--shadow`: a tr shadow beside each `default` run. */
  shadow: boolean;
  json?: string;
  svg?: string;
  html?: string;
}

/** The tr knobs given as flags (keyed as commander names them), on top of serve's defaults. */
export function resolveTrKnobs(flags: Record<string, unknown>): {
  knobs: TrKnobs;
  schedulerIntervalMs: number;
} {
  const config: RouterConfig = { ...DEFAULT_CONFIG };
  const target = config as unknown as Record<string, unknown>;
  // Flags are simulate's only layer.
  const given = new Map<string, number>();
  for (const s of TR_KNOB_SETTINGS) {
    const raw = flags[camel(s.key)];
    if (raw === undefined) continue;
    given.set(s.key, 1);
    const value = parseSetting(s, raw, `--${s.key}`);
    if (s.prop === "priority") {
      // `--priority` is the switch of `maitred serve`: the built-in class defaults (the
      // config file's section has no flag form).
      const p = value as PriorityValue;
      config.priority =
        p.kind === "section"
          ? p.priority
          : { ...structuredClone(DEFAULT_PRIORITY), enabled: p.enabled };
    } else target[s.prop] = value;
  }
  settleBounds(config, given);
  const { mode: _mode, ...knobs } = schedulerConfigOf(config);
  return { knobs, schedulerIntervalMs: config.schedulerIntervalMs };
}

/**
 * The engines' priority scheduling from the read settings, when they ask for it (fcfs leaves
 * the options, hence the run and its report, as they were).
 */
function schedulingOf(v: Record<string, unknown>): { priorityScheduling?: PriorityScheduling } {
  const p = prioritySchedulingOf(v as unknown as SchedulingFlags);
  return p === undefined ? {} : { priorityScheduling: p };
}

export function resolveSimulateFlags(flags: Record<string, unknown>): SimulateOptions {
  const v = readSettings(SIMULATE_SETTINGS, flags);
  const profile = v.profile as string;
  // Programs end before a call the engines could not hold, as `maitred bench` cuts them at
  // the served max_model_len.
  const maxContextTokens = engineMaxModelLen(profile, v.numGpuBlocks);
  const { knobs, schedulerIntervalMs } = resolveTrKnobs(flags);
  const bounds = runBounds(v, { warmupMs: DEFAULT_WARMUP_MS, durationMs: DEFAULT_DURATION_MS });
  return {
    routers: v.router as SimRouter[],
    concurrency: v.concurrency,
    numBackends: v.numBackends,
    profile,
    numGpuBlocks: v.numGpuBlocks,
    kvOffloadingSize: v.kvOffloadingSize as number,
    ...schedulingOf(v),
    workload: workloadSpecOf(v, maxContextTokens),
    warmupMs: bounds.warmupMs,
    durationMs: bounds.durationMs ?? BATCH_HORIZON_MS,
    maxPrograms: bounds.maxPrograms,
    seed: v.seed,
    schedulerIntervalMs,
    knobs,
    shadow: v.shadow === true,
    json: v.json,
    svg: v.svg,
    html: v.html,
  };
}
