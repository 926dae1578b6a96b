/**
 * The simulated backend's settings, declared once (src/config/setting.ts): defaults,
 * validation (every error names the setting), the CLI's flags and a router's `sim:` block all
 * come from this table.
 */

import { z } from "zod";
import { defaultOf, parseSetting, type Setting, settingOf } from "../config/setting.ts";
import {
  boolean,
  integer,
  nonNegative,
  oneOf,
  positive,
  shaped,
  share,
  text,
} from "../config/values.ts";
import { DEFAULT_PREEMPTION_THRESHOLD } from "../engine/queue-order.ts";
import {
  DEFAULT_BLOCK_SIZE,
  DEFAULT_MAX_NUM_BATCHED_TOKENS,
  DEFAULT_MAX_NUM_SEQS,
  DEFAULT_PROFILE,
  TIMING_PROFILES,
} from "../engine/timing.ts";
import { ConfigError } from "../errors.ts";

export const PERSONALITIES = ["vllm", "sglang"] as const;
export type Personality = (typeof PERSONALITIES)[number];
export const SCHEDULING_POLICIES = ["fcfs", "priority"] as const;
/** Which vLLM release's `/metrics` to imitate where they differ (the offloading series). */
export const VLLM_METRICS = ["new", "old"] as const;

export interface SimBackendOptions {
  host: string;
  /** 0 = pick a free port. */
  port: number;
  model: string;
  numGpuBlocks: number;
  blockSize: number;
  maxNumSeqs: number;
  maxNumBatchedTokens: number;
  maxModelLen: number;
  /** Timing profile name (engine registry). */
  profile: string;
  /** S: the engine runs S times faster than real time. */
  timeScale: number;
  seed: number;
  personality: Personality;
  enablePromptTokensDetails: boolean;
  enablePrefixCaching: boolean;
  /** Host memory for KV in GiB (vLLM `--kv-offloading-size`); 0 = no host tier. */
  kvOffloadingSize: number;
  /** vLLM's `--kv-offloading-backend`; only `native` is modelled. */
  kvOffloadingBackend: "native";
  /** Probability (0..1) that a request fails before it starts. */
  failureRate: number;
  /** Statuses drawn uniformly for rate-injected failures. */
  failureCodes: number[];
  /** Fail every stream after this many tokens (null = off); header twin x-sim-stream-error-after. */
  streamErrorAfter: number | null;
  /**
   * Share (0..1) of choices that answer a `tool_choice: "auto"` request with a tool call
   * instead of text, drawn per choice from the request's fingerprint; 0 = never.
   */
  toolCallShare: number;
  /** Scheduling by the `priority` request field (queue-order.ts): vLLM's flag, both personalities. */
  schedulingPolicy: (typeof SCHEDULING_POLICIES)[number];
  /** SGLang's `--schedule-low-priority-values-first`. */
  scheduleLowPriorityValuesFirst: boolean;
  /** SGLang's `--priority-scheduling-preemption-threshold`. */
  prioritySchedulingPreemptionThreshold: number;
  vllmMetrics: (typeof VLLM_METRICS)[number];
}

/** vLLM accepts these block sizes on CUDA. */
const BLOCK_SIZES = [1, 8, 16, 32, 64, 128];
const MAX_PORT = 65_535;
const MAX_INT = 2 ** 31 - 1;
const PROFILE_NAMES = Object.keys(TIMING_PROFILES) as [string, ...string[]];

/** A sim-backend setting and the option it fills. */
export type SimSetting = Setting & { prop: keyof SimBackendOptions };

/**
 * Defaults are vLLM's engine defaults (as src/engine/timing.ts pins them); `model`,
 * `num-gpu-blocks` and `max-model-len` default to the timing profile's (its served model, its
 * realistic KV capacity and context length).
 */
export const SIM_SETTINGS: readonly SimSetting[] = [
  {
    key: "host",
    prop: "host",
    arg: "<host>",
    help: "address to listen on",
    default: "127.0.0.1",
    schema: text(),
  },
  {
    key: "port",
    prop: "port",
    arg: "<port>",
    help: "port to listen on (0 = any free port)",
    default: 8000,
    schema: integer(0, MAX_PORT),
  },
  {
    key: "model",
    prop: "model",
    arg: "<name>",
    help: "served model name",
    defaultText: "the profile's model",
    schema: text(),
  },
  {
    key: "num-gpu-blocks",
    prop: "numGpuBlocks",
    arg: "<n>",
    help: "KV-cache blocks, block 0 reserved",
    defaultText: "the profile's capacity",
    schema: integer(2, MAX_INT),
  },
  {
    key: "block-size",
    prop: "blockSize",
    arg: "<n>",
    help: `tokens per KV block: ${BLOCK_SIZES.join(", ")}`,
    default: DEFAULT_BLOCK_SIZE,
    schema: shaped(
      integer(1, MAX_INT).refine((n) => BLOCK_SIZES.includes(n), {
        error: `must be one of ${BLOCK_SIZES.join(", ")}`,
      }),
      z.union(BLOCK_SIZES.map((n) => z.union([z.literal(n), z.literal(String(n))]))),
    ),
  },
  {
    key: "max-num-seqs",
    prop: "maxNumSeqs",
    arg: "<n>",
    help: "most requests running at once",
    default: DEFAULT_MAX_NUM_SEQS,
    schema: integer(1, MAX_INT),
  },
  {
    key: "max-num-batched-tokens",
    prop: "maxNumBatchedTokens",
    arg: "<n>",
    help: "token budget of one engine step",
    default: DEFAULT_MAX_NUM_BATCHED_TOKENS,
    schema: integer(1, MAX_INT),
  },
  {
    key: "max-model-len",
    prop: "maxModelLen",
    arg: "<n>",
    help: "context length in tokens",
    defaultText: "the profile's, or what the KV cache holds",
    schema: integer(2, MAX_INT),
  },
  {
    key: "profile",
    prop: "profile",
    arg: "<name>",
    help: `timing profile: ${PROFILE_NAMES.join(", ")}`,
    default: DEFAULT_PROFILE,
    schema: oneOf(PROFILE_NAMES),
  },
  {
    key: "time-scale",
    prop: "timeScale",
    arg: "<S>",
    help: "run the engine S times faster than real time",
    default: 1,
    schema: positive(),
  },
  {
    key: "seed",
    prop: "seed",
    arg: "<n>",
    help: "seeds output lengths, tokens and injected failures",
    default: 0,
    schema: integer(0, MAX_INT),
  },
  {
    key: "personality",
    prop: "personality",
    arg: "<name>",
    help: "the engine to imitate, vllm or sglang: its metrics and info endpoints, and its rules under --scheduling-policy priority",
    default: "vllm",
    schema: oneOf(PERSONALITIES),
  },
  {
    key: "enable-prompt-tokens-details",
    prop: "enablePromptTokensDetails",
    help: "report usage.prompt_tokens_details.cached_tokens",
    default: false,
    schema: boolean(),
  },
  {
    key: "enable-prefix-caching",
    prop: "enablePrefixCaching",
    help: "the prefix cache, on unless --no-enable-prefix-caching",
    default: true,
    negatable: true,
    schema: boolean(),
  },
  {
    key: "kv-offloading-size",
    prop: "kvOffloadingSize",
    arg: "<GiB>",
    help: "host memory for KV blocks evicted from the GPU, in GiB, all GPUs together (0 = no host tier)",
    default: 0,
    schema: nonNegative(),
  },
  {
    key: "kv-offloading-backend",
    prop: "kvOffloadingBackend",
    arg: "<name>",
    help: "how KV reaches host memory: native (vLLM's CPU offloading)",
    default: "native",
    schema: oneOf(["native"] as const),
  },
  {
    key: "failure-rate",
    prop: "failureRate",
    arg: "<p>",
    help: "probability (0..1) that a request fails before it starts",
    default: 0,
    schema: share(),
  },
  {
    key: "failure-codes",
    prop: "failureCodes",
    arg: "<list>",
    help: "comma-separated HTTP statuses for --failure-rate",
    default: "500",
    schema: shaped(
      z
        .union([z.number(), z.array(z.union([z.number(), z.string()])), z.string()], {
          error: "must be a list of HTTP statuses",
        })
        .transform((v): unknown[] =>
          Array.isArray(v) ? v : typeof v === "number" ? [v] : v.split(","),
        )
        .pipe(z.array(integer(400, 599)).min(1, { error: "must not be empty" })),
      z.union([
        z.number().int().min(400).max(599),
        z.string().regex(/^\s*[45]\d\d(\s*,\s*[45]\d\d)*\s*$/),
        z
          .array(
            z.union([z.number().int().min(400).max(599), z.string().regex(/^\s*[45]\d\d\s*$/)]),
          )
          .min(1),
      ]),
    ),
  },
  {
    key: "stream-error-after",
    prop: "streamErrorAfter",
    arg: "<n>",
    help: "fail every request with a mid-stream error after n tokens (per request: header x-sim-stream-error-after)",
    defaultText: "off",
    schema: integer(0, MAX_INT),
  },
  {
    key: "tool-call-share",
    prop: "toolCallShare",
    arg: "<p>",
    help: "share (0..1) of requests with tools and tool_choice auto that answer with a tool call",
    default: 0.5,
    schema: share(),
  },
  {
    key: "scheduling-policy",
    prop: "schedulingPolicy",
    arg: "<policy>",
    help: "fcfs, or priority: by the requests' priority field, as vLLM's flag of this name (SGLang's is --enable-priority-scheduling), with the personality's rules",
    default: "fcfs",
    schema: oneOf(SCHEDULING_POLICIES),
  },
  {
    key: "schedule-low-priority-values-first",
    prop: "scheduleLowPriorityValuesFirst",
    help: "SGLang: lower priority values first (its default is higher first; vLLM's always lower)",
    default: false,
    schema: boolean(),
  },
  {
    key: "priority-scheduling-preemption-threshold",
    prop: "prioritySchedulingPreemptionThreshold",
    arg: "<n>",
    help: "SGLang: a waiting request preempts running ones whose priority is worse by more than n",
    default: DEFAULT_PREEMPTION_THRESHOLD,
    schema: integer(0, MAX_INT),
  },
  {
    key: "vllm-metrics",
    prop: "vllmMetrics",
    arg: "<shape>",
    help: "vLLM's offloading series: new (kv_offload_load_* and kv_offload_store_* beside the deprecated transfer_type ones, as newer releases emit both) or old (the deprecated ones only, as older releases)",
    default: "new",
    schema: oneOf(VLLM_METRICS),
  },
];

/** One of the simulated backend's settings, for a command that offers it too. */
export const simSetting = (key: string): SimSetting =>
  settingOf(SIM_SETTINGS, key, "maitred sim-backend");

/**
 * The settings a router's `sim:` block may give its simulated backends (kebab-case there, as
 * the flags): every option but where it listens and what it imitates, which the router sets.
 */
export const SIM_BLOCK_KEYS = SIM_SETTINGS.map((s) => s.key).filter(
  (k) => k !== "host" && k !== "port" && k !== "personality",
);

/** Raw values as they come from flags (strings) or code (typed); absent = default. */
export type RawSimBackendOptions = { [K in keyof SimBackendOptions]?: unknown };

/**
 * Validate and fill defaults; throws ConfigError naming the setting. `originOf` says where a
 * field's value came from (default: its flag).
 */
export function resolveSimBackendOptions(
  raw: RawSimBackendOptions,
  originOf: (key: string) => string = (key) => `--${key}`,
): SimBackendOptions {
  const o: Record<string, unknown> = {};
  for (const s of SIM_SETTINGS) {
    const given = raw[s.prop];
    // null is "not set" (an options object already resolved says so for `stream-error-after`).
    o[s.prop] =
      given === undefined || given === null
        ? defaultOf(s)
        : parseSetting(s, given, originOf(s.key));
  }
  const options = o as unknown as SimBackendOptions;
  const profile = TIMING_PROFILES[options.profile];
  options.model ??= profile.modelName;
  options.streamErrorAfter ??= null;
  // The profile's capacity is tokens; another block size keeps the same token capacity.
  options.numGpuBlocks ??= Math.floor(
    (profile.numGpuBlocks * DEFAULT_BLOCK_SIZE) / options.blockSize,
  );
  // vLLM refuses to start when one max-model-len sequence cannot fit in the KV cache;
  // block 0 is the reserved null block.
  // Without an explicit --max-model-len, a small cache shortens the default context to what
  // fits (so `--num-gpu-blocks 2048` alone starts); an explicit value that cannot fit is refused.
  const capacity = (options.numGpuBlocks - 1) * options.blockSize;
  if (options.maxModelLen === undefined)
    options.maxModelLen = Math.min(profile.maxModelLen, capacity);
  if (capacity < options.maxModelLen) {
    throw new ConfigError(
      "max-model-len",
      `${options.maxModelLen} tokens do not fit in the KV cache of ${capacity} tokens ((num-gpu-blocks − 1) × block-size); lower --max-model-len or raise --num-gpu-blocks (from ${originOf("max-model-len")})`,
    );
  }
  return options;
}

const SIM_BLOCK_SETTINGS = SIM_SETTINGS.filter((s) => SIM_BLOCK_KEYS.includes(s.key));

/**
 * A router's `sim:` block: these settings by their flag names, checked as `maitred sim-backend`
 * checks them, so a misspelt or bad one stops startup instead of being ignored. Yields the
 * options keyed as `startSimBackend` takes them.
 */
export const simBlockSchema = z
  .strictObject(
    Object.fromEntries(
      // null (`stream-error-after: ~`) leaves a setting at its default, as absent does.
      SIM_BLOCK_SETTINGS.map((s) => [s.key, s.schema.nullish().meta({ description: s.help })]),
    ),
    {
      error: (iss) =>
        iss.code === "unrecognized_keys"
          ? `unknown setting; known: ${SIM_BLOCK_KEYS.join(", ")}`
          : "must be a mapping",
    },
  )
  // An empty `sim:` is no settings, as an empty setting in it is its default.
  .nullable()
  .transform((block, ctx) => {
    const options: RawSimBackendOptions = {};
    for (const s of SIM_BLOCK_SETTINGS) {
      const v = block?.[s.key];
      if (v !== undefined && v !== null) options[s.prop] = v;
    }
    try {
      resolveSimBackendOptions(options);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      const message = err.message.slice(err.field.length + 2).replace(/ \(from [^)]*\)$/, "");
      ctx.issues.push({ code: "custom", message, path: [err.field], input: block ?? {} });
      return z.NEVER;
    }
    return options;
  });
