/**
 * Step time model and named hardware/model profiles.
 *
 *     step = t_fixed + max(t_weights, b·T) + c·K + d·A
 *
 * T = tokens scheduled in the step, K = KV tokens read (each decode's context, each prefill
 * chunk's already-computed prefix), A = Σ over prefill chunks of C·(P + C/2) query-key pairs.
 * Memory-bound until T reaches the knee t_weights/b, then linear in T.
 */

import { ConfigError } from "../errors.ts";
import type { EngineConfig, TimingCoefficients } from "./types.ts";

const MS = 1e-3;
const US = 1e-6;
const NS = 1e-9;

export interface StepShape {
  tokens: number;
  contextTokens: number;
  attentionPairs: number;
}

export function stepDuration(t: TimingCoefficients, shape: StepShape): number {
  // A step that scheduled nothing (only a preemption happened) runs no forward pass.
  if (shape.tokens === 0) return t.tFixed;
  return (
    t.tFixed +
    Math.max(t.tWeights, t.b * shape.tokens) +
    t.c * shape.contextTokens +
    t.d * shape.attentionPairs
  );
}

export interface TimingProfile {
  name: string;
  /** The served model this profile imitates (HF id). */
  modelName: string;
  description: string;
  timing: TimingCoefficients;
  /** Realistic KV capacity in blocks of DEFAULT_BLOCK_SIZE tokens (block 0 included). */
  numGpuBlocks: number;
  maxModelLen: number;
  /** KV bytes per token: 2 (K and V) × layers × KV heads × head size × 2 bytes (BF16). */
  kvBytesPerToken: number;
  /** Host link bandwidth each way for the host KV tier (bytes/s), all the model's GPUs together. */
  hostLinkBytesPerSecond: number;
}

/**
 * One H100's host link for KV copies: vLLM's offloading write-up measured about 50 GB/s in
 * either direction alone over PCIe Gen5 x16 with 2 MB blocks (83.4 GB/s both ways at once;
 * https://blog.vllm.ai/2026/01/08/kv-offloading-connector.html). The model charges each
 * direction 50 GB/s.
 */
const H100_HOST_LINK = 50e9;

/** vLLM engine defaults (max_num_seqs 256 as in releases before the ≥70 GiB bump). */
export const DEFAULT_BLOCK_SIZE = 16;
export const DEFAULT_MAX_NUM_BATCHED_TOKENS = 8192;
export const DEFAULT_MAX_NUM_SEQS = 256;

/**
 * Coefficients for BF16 KV on vLLM V1 with CUDA graphs. KV capacities are the KV capacity at
 * gpu-memory-utilization 0.9 divided by 16-token blocks: Llama-3.1-8B ≈410k tokens (80 GB × 0.9
 * − 16.1 GB weights − activations, at 128 KiB per token), Qwen3-8B ≈360k, Qwen3-32B FP8
 * ≈135k, Qwen3-32B BF16 TP2 ≈275k. Context lengths are the models' config.json limits.
 */
export const TIMING_PROFILES: Readonly<Record<string, TimingProfile>> = {
  "llama-3.1-8b-h100": {
    name: "llama-3.1-8b-h100",
    modelName: "meta-llama/Llama-3.1-8B-Instruct",
    description: "Llama-3.1-8B BF16 on one H100 SXM",
    timing: { tFixed: 0.8 * MS, tWeights: 5.6 * MS, b: 22 * US, c: 70 * NS, d: 1.2 * NS },
    numGpuBlocks: 25_600,
    maxModelLen: 131_072,
    kvBytesPerToken: 2 * 32 * 8 * 128 * 2,
    hostLinkBytesPerSecond: H100_HOST_LINK,
  },
  "qwen3-8b-h100": {
    name: "qwen3-8b-h100",
    modelName: "Qwen/Qwen3-8B",
    description: "Qwen3-8B BF16 on one H100 SXM",
    timing: { tFixed: 0.8 * MS, tWeights: 5.7 * MS, b: 22 * US, c: 80 * NS, d: 1.3 * NS },
    numGpuBlocks: 22_500,
    maxModelLen: 40_960,
    kvBytesPerToken: 2 * 36 * 8 * 128 * 2,
    hostLinkBytesPerSecond: H100_HOST_LINK,
  },
  "qwen3-32b-h100": {
    name: "qwen3-32b-h100",
    modelName: "Qwen/Qwen3-32B",
    description: "Qwen3-32B with FP8 weights on one H100 SXM",
    timing: { tFixed: 1.0 * MS, tWeights: 11.5 * MS, b: 55 * US, c: 140 * NS, d: 4.7 * NS },
    numGpuBlocks: 8_400,
    maxModelLen: 40_960,
    kvBytesPerToken: 2 * 64 * 8 * 128 * 2,
    hostLinkBytesPerSecond: H100_HOST_LINK,
  },
  "qwen3-32b-h100-tp2": {
    name: "qwen3-32b-h100-tp2",
    modelName: "Qwen/Qwen3-32B",
    description: "Qwen3-32B BF16 on two H100 SXM (TP=2)",
    timing: { tFixed: 1.5 * MS, tWeights: 11.5 * MS, b: 55 * US, c: 70 * NS, d: 2.3 * NS },
    numGpuBlocks: 17_200,
    maxModelLen: 40_960,
    kvBytesPerToken: 2 * 64 * 8 * 128 * 2,
    hostLinkBytesPerSecond: 2 * H100_HOST_LINK, // each GPU copies its half of the heads over its own link
  },
};

export const DEFAULT_PROFILE = "llama-3.1-8b-h100";

/** The named profile with any coefficient overridden; unknown names are a ConfigError. */
export function resolveProfile(
  name: string,
  overrides: Partial<TimingCoefficients> = {},
): TimingProfile {
  const base = Object.hasOwn(TIMING_PROFILES, name) ? TIMING_PROFILES[name] : undefined;
  if (base === undefined) {
    throw new ConfigError(
      "profile",
      `unknown timing profile '${name}'; known: ${Object.keys(TIMING_PROFILES).join(", ")}`,
    );
  }
  const timing = { ...base.timing };
  for (const key of Object.keys(timing) as (keyof TimingCoefficients)[]) {
    const v = overrides[key];
    if (v === undefined) continue;
    if (!Number.isFinite(v) || v < 0) {
      throw new ConfigError(`timing.${key}`, `must be a finite number ≥ 0, got ${v}`);
    }
    timing[key] = v;
  }
  return { ...base, timing };
}

export interface EngineConfigOverrides extends Partial<Omit<EngineConfig, "timing">> {
  timing?: Partial<TimingCoefficients>;
}

/** A complete EngineConfig from a profile plus vLLM defaults; every field overridable. */
export function engineConfigFromProfile(
  name: string,
  overrides: EngineConfigOverrides = {},
): EngineConfig {
  const profile = resolveProfile(name, overrides.timing);
  const defined = Object.fromEntries(
    Object.entries(overrides).filter(([k, v]) => v !== undefined && k !== "timing"),
  ) as Partial<EngineConfig>;
  const blockSize = defined.blockSize ?? DEFAULT_BLOCK_SIZE;
  return {
    modelName: profile.modelName,
    blockSize,
    // The profile's capacity is in tokens; other block sizes keep the same token capacity.
    numGpuBlocks: Math.floor((profile.numGpuBlocks * DEFAULT_BLOCK_SIZE) / blockSize),
    maxNumSeqs: DEFAULT_MAX_NUM_SEQS,
    maxNumBatchedTokens: DEFAULT_MAX_NUM_BATCHED_TOKENS,
    maxModelLen: profile.maxModelLen,
    enablePrefixCaching: true,
    seed: 0,
    kvBytesPerToken: profile.kvBytesPerToken,
    hostLinkBytesPerSecond: profile.hostLinkBytesPerSecond,
    ...defined,
    timing: profile.timing,
  };
}
