import { ConfigError } from "../errors.ts";
import type { SchedulerConfig } from "./api.ts";
import type { BackendSpec, EngineOrderName } from "./records.ts";

import {
  ACTING_TOKEN_WEIGHT,
  AGEING_MS,
  BUFFER_PER_PROGRAM_TOKENS,
  FINAL_GRACE_MS,
  GROWTH_HEADROOM_STEPS,
  IDLE_TIMEOUT_MS,
  LEND_AFTER_TOOL_TIMES,
  LEND_MAX_HOLD_MS,
  MAX_PAUSE_MS,
  NEW_PROGRAM_START_MS,
  PRIORITY_POLARITIES,
  PROGRESS_INTERVAL_TOKENS,
  TIER_PACKINGS,
  UNHEALTHY_AFTER_FAILURES,
} from "./scheduler-constants.ts";

export * from "./scheduler-constants.ts";

/** The engine orders a config may name (engine-order.ts implements each). */
export const ENGINE_ORDER_NAMES = [
  "auto",
  "arrival",
  "smallest",
  "uncached",
] as const satisfies readonly EngineOrderName[];

/** Scheduler defaults: the constants (scheduler-constants.ts) as one config. */

/** The config with its optional fields filled in (what the core runs with). */
export type ResolvedSchedulerConfig = SchedulerConfig &
  Required<
    Pick<
      SchedulerConfig,
      | "growthHeadroomSteps"
      | "ageingMs"
      | "newProgramStartMs"
      | "lendAfterToolTimes"
      | "lendMaxHoldMs"
      | "finalGraceMs"
    >
  >;

export const DEFAULT_SCHEDULER_CONFIG: Readonly<ResolvedSchedulerConfig> = Object.freeze({
  mode: "tr",
  placement: "best-fit",
  actingTokenWeight: ACTING_TOKEN_WEIGHT,
  useActingTokenDecay: false,
  bufferPerProgram: BUFFER_PER_PROGRAM_TOKENS,
  maxPauseMs: MAX_PAUSE_MS,
  idleTimeoutMs: IDLE_TIMEOUT_MS,
  progressIntervalTokens: PROGRESS_INTERVAL_TOKENS,
  unhealthyAfterFailures: UNHEALTHY_AFTER_FAILURES,
  growthHeadroomSteps: GROWTH_HEADROOM_STEPS,
  ageingMs: AGEING_MS,
  newProgramStartMs: NEW_PROGRAM_START_MS,
  lendAfterToolTimes: LEND_AFTER_TOOL_TIMES,
  lendMaxHoldMs: LEND_MAX_HOLD_MS,
  finalGraceMs: FINAL_GRACE_MS,
});

export function resolveSchedulerConfig(config: SchedulerConfig): ResolvedSchedulerConfig {
  return {
    ...config,
    growthHeadroomSteps: config.growthHeadroomSteps ?? GROWTH_HEADROOM_STEPS,
    ageingMs: config.ageingMs ?? AGEING_MS,
    newProgramStartMs: config.newProgramStartMs ?? NEW_PROGRAM_START_MS,
    lendAfterToolTimes: config.lendAfterToolTimes ?? LEND_AFTER_TOOL_TIMES,
    lendMaxHoldMs: config.lendMaxHoldMs ?? LEND_MAX_HOLD_MS,
    finalGraceMs: config.finalGraceMs ?? FINAL_GRACE_MS,
  };
}

function nonNegative(field: string, value: number): void {
  if (!Number.isFinite(value) || value < 0) {
    throw new ConfigError(field, `must be a finite number >= 0, got ${value}`);
  }
}

/**
 * Defensive check at construction: the config module validates user input first, but a bad
 * programmatic config (tests, simulator) must fail loudly instead of corrupting the books.
 */
export function assertSchedulerConfig(config: SchedulerConfig): void {
  if (config.mode !== "tr" && config.mode !== "default") {
    throw new ConfigError("mode", `must be "tr" or "default", got ${String(config.mode)}`);
  }
  if (config.placement !== "best-fit" && config.placement !== "worst-fit") {
    throw new ConfigError(
      "placement",
      `must be "best-fit" or "worst-fit", got ${String(config.placement)}`,
    );
  }
  const order = config.engineOrder;
  if (order !== undefined && !(ENGINE_ORDER_NAMES as readonly string[]).includes(order)) {
    throw new ConfigError(
      "engineOrder",
      `must be one of ${ENGINE_ORDER_NAMES.join(", ")}, got ${String(order)}`,
    );
  }
  const packing = config.tierPacking;
  if (packing !== undefined && !(TIER_PACKINGS as readonly string[]).includes(packing)) {
    throw new ConfigError("tierPacking", `must be rotate or gpu, got ${String(packing)}`);
  }
  nonNegative("actingTokenWeight", config.actingTokenWeight);
  nonNegative("bufferPerProgram", config.bufferPerProgram);
  nonNegative("maxPauseMs", config.maxPauseMs);
  nonNegative("idleTimeoutMs", config.idleTimeoutMs);
  nonNegative("progressIntervalTokens", config.progressIntervalTokens);
  if (config.ageingMs !== undefined) nonNegative("ageingMs", config.ageingMs);
  if (config.newProgramStartMs !== undefined) {
    nonNegative("newProgramStartMs", config.newProgramStartMs);
  }
  if (config.lendMaxHoldMs !== undefined) nonNegative("lendMaxHoldMs", config.lendMaxHoldMs);
  if (config.finalGraceMs !== undefined) nonNegative("finalGraceMs", config.finalGraceMs);
  if (config.lendAfterToolTimes !== undefined) {
    nonNegative("lendAfterToolTimes", config.lendAfterToolTimes);
  }
  if (config.growthHeadroomSteps !== undefined) {
    nonNegative("growthHeadroomSteps", config.growthHeadroomSteps);
  }
  if (!Number.isInteger(config.unhealthyAfterFailures) || config.unhealthyAfterFailures < 1) {
    throw new ConfigError(
      "unhealthyAfterFailures",
      `must be an integer >= 1, got ${config.unhealthyAfterFailures}`,
    );
  }
}

/** Backend ids key every book: they must be unique. */
export function assertBackends(backends: readonly BackendSpec[]): void {
  const seen = new Set<string>();
  for (const b of backends) {
    if (seen.has(b.id)) throw new ConfigError("backends", `duplicate backend ${b.id}`);
    const p = b.priorityScheduling;
    if (p !== undefined && !(PRIORITY_POLARITIES as readonly string[]).includes(p)) {
      throw new ConfigError(
        "backends",
        `${b.id}: priorityScheduling must be "lower-first" or "higher-first", got ${String(p)}`,
      );
    }
    seen.add(b.id);
  }
}
