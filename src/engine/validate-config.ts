/**
 * EngineConfig validation: every error names the field. Like vLLM,
 * an engine whose KV cache cannot hold one `maxModelLen` sequence refuses to start.
 */

import { ConfigError } from "../errors.ts";
import type { EngineConfig, TimingCoefficients } from "./types.ts";

function positiveInteger(field: string, value: number, min = 1): void {
  if (!Number.isInteger(value) || value < min) {
    throw new ConfigError(field, `must be an integer ≥ ${min}, got ${value}`);
  }
}

export function validateEngineConfig(config: EngineConfig): void {
  positiveInteger("blockSize", config.blockSize);
  // Block 0 is the null block, so at least one more is needed.
  positiveInteger("numGpuBlocks", config.numGpuBlocks, 2);
  positiveInteger("maxNumSeqs", config.maxNumSeqs);
  positiveInteger("maxNumBatchedTokens", config.maxNumBatchedTokens);
  positiveInteger("maxModelLen", config.maxModelLen, 2);
  if (!Number.isFinite(config.seed))
    throw new ConfigError("seed", `must be a number, got ${config.seed}`);
  if (config.meanOutputTokens !== undefined && !(config.meanOutputTokens > 0)) {
    throw new ConfigError("meanOutputTokens", `must be > 0, got ${config.meanOutputTokens}`);
  }
  for (const key of ["tFixed", "tWeights", "b", "c", "d"] as (keyof TimingCoefficients)[]) {
    const v = config.timing?.[key];
    if (!Number.isFinite(v) || v < 0) {
      throw new ConfigError(`timing.${key}`, `must be a finite number ≥ 0, got ${v}`);
    }
  }
  const offload = config.kvOffloadingSize;
  if (offload !== undefined && (!Number.isFinite(offload) || offload < 0)) {
    throw new ConfigError("kvOffloadingSize", `must be a number of GiB ≥ 0, got ${offload}`);
  }
  if (offload !== undefined && offload > 0) {
    for (const key of ["kvBytesPerToken", "hostLinkBytesPerSecond"] as const) {
      const v = config[key];
      if (v === undefined || !Number.isFinite(v) || v <= 0) {
        throw new ConfigError(key, `must be a number > 0 with a host tier, got ${v}`);
      }
    }
  }
  const p = config.priorityScheduling;
  if (p !== undefined) {
    if (p.rules !== "vllm" && p.rules !== "sglang") {
      throw new ConfigError("priorityScheduling.rules", `must be vllm or sglang, got ${p.rules}`);
    }
    const t = p.preemptionThreshold;
    // Below 0 a request could preempt its equals, and those admitted before it in the same step.
    if (t !== undefined) positiveInteger("priorityScheduling.preemptionThreshold", t, 0);
  }
  const blocksPerMaxSequence = Math.ceil(config.maxModelLen / config.blockSize);
  if (blocksPerMaxSequence > config.numGpuBlocks - 1) {
    throw new ConfigError(
      "maxModelLen",
      `${config.maxModelLen} tokens need ${blocksPerMaxSequence} KV blocks but the cache has ${config.numGpuBlocks - 1} usable blocks of ${config.blockSize} tokens; lower maxModelLen or raise numGpuBlocks`,
    );
  }
}
