/**
 * The scheduler core's settings, read from the router's: one mapping, used by the HTTP router
 * and by the simulator alike, so both run the core with the same knobs.
 */
import type { SchedulerConfig } from "../core/api.ts";
import { corePriorityOf } from "./priority-section.ts";
import type { RouterConfig } from "./router-config.ts";

function trSettingsOf(config: RouterConfig): SchedulerConfig {
  return {
    mode: config.router,
    placement: config.placement,
    engineOrder: config.engineOrder,
    tierPacking: config.tierPacking,
    actingTokenWeight: config.actingTokenWeight,
    useActingTokenDecay: config.useActingTokenDecay,
    bufferPerProgram: config.bufferPerProgram,
    growthHeadroomSteps: config.growthHeadroomSteps,
    ageingMs: config.ageingMs,
    lendAfterToolTimes: config.lendAfterToolTimes,
    lendMaxHoldMs: config.lendMaxHoldMs,
    finalGraceMs: config.finalGraceMs,
    maxPauseMs: config.maxPauseMs,
    idleTimeoutMs: config.idleTimeoutMs,
    progressIntervalTokens: config.progressIntervalTokens,
    unhealthyAfterFailures: config.unhealthyAfterFailures,
  };
}

/** The scheduler's settings from the router's; `priority` only when priorities are asked for. */
export function schedulerConfigOf(config: RouterConfig): SchedulerConfig {
  const priority = corePriorityOf(config.priority, config.queuePolicy, config.priorityPolicy);
  const base = trSettingsOf(config);
  return priority === undefined ? base : { ...base, priority };
}
