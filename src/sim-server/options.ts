/**
 * The simulated backend's one options schema: defaults, validation (every error names the
 * flag) and the flag table the CLI is generated from.
 */

import {
  parseBoolean,
  parseEnum,
  parseInteger,
  parseList,
  parseNumber,
  parseString,
  type ValueSource,
} from "../config/parse-value.ts";
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
}

/**
 * The settings a router's `sim:` block may give its simulated backends (kebab-case there, as
 * the flags): every option but where it listens and what it imitates, which the router sets.
 */
export const SIM_BLOCK_KEYS = [
  "model",
  "num-gpu-blocks",
  "block-size",
  "max-num-seqs",
  "max-num-batched-tokens",
  "max-model-len",
  "profile",
  "time-scale",
  "seed",
  "enable-prompt-tokens-details",
  "enable-prefix-caching",
  "failure-rate",
  "failure-codes",
  "stream-error-after",
  "tool-call-share",
] as const;

/**
 * Defaults are vLLM's engine defaults (as src/engine/timing.ts pins them);
 * `model`, `numGpuBlocks` and `maxModelLen` default to the timing profile's (its served model,
 * its realistic KV capacity and context length).
 */
export const SIM_BACKEND_DEFAULTS = {
  host: "127.0.0.1",
  port: 8000,
  blockSize: DEFAULT_BLOCK_SIZE,
  maxNumSeqs: DEFAULT_MAX_NUM_SEQS,
  maxNumBatchedTokens: DEFAULT_MAX_NUM_BATCHED_TOKENS,
  profile: DEFAULT_PROFILE,
  timeScale: 1,
  seed: 0,
  personality: "vllm",
  enablePromptTokensDetails: false,
  enablePrefixCaching: true,
  failureRate: 0,
  failureCodes: [500],
  streamErrorAfter: null,
  toolCallShare: 0.5,
} as const satisfies Partial<SimBackendOptions>;

/** vLLM accepts these block sizes on CUDA. */
const BLOCK_SIZES = [1, 8, 16, 32, 64, 128];
const MAX_PORT = 65_535;
const MAX_INT = 2 ** 31 - 1;

/** Raw values as they come from flags (strings) or code (typed); absent = default. */
export type RawSimBackendOptions = { [K in keyof SimBackendOptions]?: unknown };

/**
 * Validate and fill defaults; throws ConfigError naming the flag. `originOf` says where a
 * field's value came from (default: its flag).
 */
export function resolveSimBackendOptions(
  raw: RawSimBackendOptions,
  originOf: (field: string) => string = (field) => `--${field}`,
): SimBackendOptions {
  const src = (field: string): ValueSource => ({ field, origin: originOf(field) });
  const d = SIM_BACKEND_DEFAULTS;
  const profileName =
    raw.profile === undefined ? d.profile : parseString(raw.profile, src("profile"));
  const profile = Object.hasOwn(TIMING_PROFILES, profileName)
    ? TIMING_PROFILES[profileName]
    : undefined;
  if (profile === undefined) {
    throw new ConfigError(
      "profile",
      `unknown timing profile ${JSON.stringify(profileName)}; known: ${Object.keys(TIMING_PROFILES).join(", ")}`,
    );
  }
  const pick = <T>(key: keyof SimBackendOptions, parse: (v: unknown) => T, fallback: T): T =>
    raw[key] === undefined ? fallback : parse(raw[key]);
  const int = (field: string, min: number) => (v: unknown) =>
    parseInteger(v, src(field), min, MAX_INT);

  const o: SimBackendOptions = {
    host: pick("host", (v) => parseString(v, src("host")), d.host),
    port: pick("port", (v) => parseInteger(v, src("port"), 0, MAX_PORT), d.port),
    model: pick("model", (v) => parseString(v, src("model")), profile.modelName),
    blockSize: pick("blockSize", int("block-size", 1), d.blockSize as number),
    numGpuBlocks: 0,
    maxNumSeqs: pick("maxNumSeqs", int("max-num-seqs", 1), d.maxNumSeqs),
    maxNumBatchedTokens: pick(
      "maxNumBatchedTokens",
      int("max-num-batched-tokens", 1),
      d.maxNumBatchedTokens,
    ),
    maxModelLen: pick("maxModelLen", int("max-model-len", 2), profile.maxModelLen),
    profile: profileName,
    timeScale: pick("timeScale", (v) => parseNumber(v, src("time-scale")), d.timeScale),
    seed: pick("seed", int("seed", 0), d.seed),
    personality: pick(
      "personality",
      (v) => parseEnum(v, src("personality"), PERSONALITIES),
      d.personality as Personality,
    ),
    enablePromptTokensDetails: pick(
      "enablePromptTokensDetails",
      (v) => parseBoolean(v, src("enable-prompt-tokens-details")),
      d.enablePromptTokensDetails,
    ),
    enablePrefixCaching: pick(
      "enablePrefixCaching",
      (v) => parseBoolean(v, src("enable-prefix-caching")),
      d.enablePrefixCaching,
    ),
    failureRate: pick("failureRate", (v) => parseNumber(v, src("failure-rate")), d.failureRate),
    failureCodes: pick("failureCodes", (v) => parseFailureCodes(v, src("failure-codes")), [
      ...d.failureCodes,
    ]),
    streamErrorAfter: pick(
      "streamErrorAfter",
      (v) => (v === null ? null : parseInteger(v, src("stream-error-after"), 0, MAX_INT)),
      d.streamErrorAfter,
    ),
    toolCallShare: pick(
      "toolCallShare",
      (v) => parseNumber(v, src("tool-call-share")),
      d.toolCallShare,
    ),
  };

  // The profile's capacity is tokens; another block size keeps the same token capacity.
  o.numGpuBlocks = pick(
    "numGpuBlocks",
    int("num-gpu-blocks", 2),
    Math.floor((profile.numGpuBlocks * DEFAULT_BLOCK_SIZE) / o.blockSize),
  );
  if (!BLOCK_SIZES.includes(o.blockSize)) {
    throw new ConfigError(
      "block-size",
      `must be one of ${BLOCK_SIZES.join(", ")}, got ${o.blockSize}`,
    );
  }
  if (!(o.timeScale > 0)) throw new ConfigError("time-scale", `must be > 0, got ${o.timeScale}`);
  if (o.failureRate < 0 || o.failureRate > 1) {
    throw new ConfigError("failure-rate", `must be between 0 and 1, got ${o.failureRate}`);
  }
  if (o.toolCallShare < 0 || o.toolCallShare > 1) {
    throw new ConfigError("tool-call-share", `must be between 0 and 1, got ${o.toolCallShare}`);
  }
  // vLLM refuses to start when one max-model-len sequence cannot fit in the KV cache;
  // block 0 is the reserved null block.
  // Without an explicit --max-model-len, a small cache shortens the default context to what
  // fits (so `--num-gpu-blocks 2048` alone starts); an explicit value that cannot fit is refused.
  const capacity = (o.numGpuBlocks - 1) * o.blockSize;
  if (raw.maxModelLen === undefined) o.maxModelLen = Math.min(o.maxModelLen, capacity);
  if (capacity < o.maxModelLen) {
    throw new ConfigError(
      "max-model-len",
      `${o.maxModelLen} tokens do not fit in the KV cache of ${capacity} tokens ((num-gpu-blocks − 1) × block-size); lower --max-model-len or raise --num-gpu-blocks`,
    );
  }
  return o;
}

function parseFailureCodes(raw: unknown, field: ValueSource): number[] {
  const items = Array.isArray(raw) ? raw.map(String) : parseList(raw, field);
  return items.map((item) => parseInteger(item, field, 400, 599));
}
