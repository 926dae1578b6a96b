/**
 * `maitred serve`'s settings, each declared once (setting.ts): flags, `MAITRED_*` variables,
 * the YAML file, `--help`, config/README.md's flag table and the file's JSON Schema all come from this
 * table, so a setting cannot exist in one and not the others. Defaults follow ThunderAgent's
 * CLI unless noted; the scheduler's numbers come from the core's own defaults so router and
 * simulator agree.
 */
import { hostname } from "node:os";
import type { ParsedBackends } from "./backends-setting.ts";
import { DEFAULT_BUDGETS } from "./budget-section.ts";
import { DEFAULT_PRIORITY } from "./priority-section.ts";
import type { RouterConfig, RouterSetting } from "./router-config-type.ts";
import { LIMIT_SETTINGS } from "./router-limits.ts";
import { ROUTING_SETTINGS } from "./router-settings.ts";
import { defaultOf } from "./setting.ts";
import { DEFAULT_TAIL, TAIL_PRESETS } from "./tail-preset.ts";

export { type HostKvTokens, type ParsedBackends, parseHostKvTokens } from "./backends-setting.ts";
export type { RouterConfig, RouterSetting } from "./router-config-type.ts";
export { CELL_NAME } from "./router-limits.ts";
export { LOG_LEVEL_SETTING } from "./router-settings.ts";

/** Every serve setting, in the order `--help` and config/README.md list them. */
export const ROUTER_SETTINGS: readonly RouterSetting[] = [...ROUTING_SETTINGS, ...LIMIT_SETTINGS];

/**
 * The built-in configuration: each setting's default read by its own schema, and the values
 * that have none (null: decided at startup, or by another setting).
 */
export const DEFAULT_CONFIG: RouterConfig = (() => {
  const config: Record<string, unknown> = {
    backends: [],
    simBackends: 0,
    maxBufferedBytes: null,
    adminToken: null,
    cell: hostname(),
    kvBytesPerToken: null,
    hostKvTokens: null,
    enginePriority: null,
    sim: {},
    priority: DEFAULT_PRIORITY,
    budgets: DEFAULT_BUDGETS,
    queuePolicy: null,
    priorityPolicy: null,
    ageingMs: TAIL_PRESETS[DEFAULT_TAIL].ageingMs,
    maxPauseMs: TAIL_PRESETS[DEFAULT_TAIL].maxPauseMs,
    tierPacking: TAIL_PRESETS[DEFAULT_TAIL].tierPacking,
    boundsOverridden: { ageing: false, maxPause: false, tierPacking: false },
  };
  for (const s of ROUTER_SETTINGS) {
    const value = defaultOf(s);
    if (value === undefined) continue;
    if (s.prop === "backends") Object.assign(config, value as ParsedBackends);
    else config[s.prop] = value;
  }
  return config as unknown as RouterConfig;
})();
