/**
 * `--tail`: a named point on the frontier between steps/min and the longest wait, over
 * `--ageing`, `--max-pause` and `--tier-packing` (the presets and their reasons live with the
 * scheduler's other numbers, in src/core/scheduler-constants.ts). An explicit one of the three
 * in the preset's layer or a higher one (file < environment < flag) overrides that part of the
 * preset; the others stay the preset's. Serve and simulate read their bounds through this one
 * rule (`settleBounds`).
 */
import {
  DEFAULT_TAIL,
  TAIL_NAMES,
  TAIL_PRESETS,
  type TailPreset,
  TIER_PACKINGS,
  type TierPacking,
} from "../core/scheduler-constants.ts";
import type { Setting } from "./setting.ts";
import { oneOf } from "./values.ts";

export { DEFAULT_TAIL, TAIL_NAMES, TAIL_PRESETS, type TailPreset };

const s = (ms: number) => `${ms / 1000} s`;

export const TAIL_SETTING = {
  key: "tail",
  arg: "<preset>",
  help: `bounds on waiting by name: ${TAIL_NAMES.map(
    (t) =>
      `${t} (--ageing ${s(TAIL_PRESETS[t].ageingMs)}, --max-pause ${s(TAIL_PRESETS[t].maxPauseMs)})`,
  ).join(
    ", ",
  )}; bounded keeps every wait inside the 600 s after which the OpenAI and Anthropic SDKs give up, throughput is ThunderAgent's and also packs under the GPU where a host tier holds the contexts (--tier-packing gpu); --ageing, --max-pause or --tier-packing overrides its part`,
  default: DEFAULT_TAIL,
  schema: oneOf(TAIL_NAMES),
} satisfies Setting<TailPreset>;

/** What `--help` says of `--ageing` and `--max-pause` without a value of their own. */
export const fromTail = (half: "ageingMs" | "maxPauseMs") =>
  `from --tail (${DEFAULT_TAIL}: ${TAIL_PRESETS[DEFAULT_TAIL][half] / 1000})`;

/**
 * The bounds a configuration runs with and where each came from: the part of serve's
 * RouterConfig they live in.
 */
export interface TailFields {
  tail: TailPreset;
  ageingMs: number;
  maxPauseMs: number;
  /** Where a host tier holds the contexts: rotate within GPU and tier, or pack under the GPU. */
  tierPacking: TierPacking;
  boundsOverridden: { ageing: boolean; maxPause: boolean; tierPacking: boolean };
}

/**
 * Settles the bounds once every layer is read. `given` maps each setting some layer gave to
 * the highest layer that gave it (file < environment < flag, as for every setting): a half
 * given in the preset's layer or above overrides that half; a half given below the preset's
 * layer gives way to it, so `--tail throughput` on the command line means ThunderAgent's
 * bounds whatever a config file says, while `--tail throughput --ageing 60` keeps its 60 s.
 */
export function settleBounds(config: TailFields, given: ReadonlyMap<string, number>): void {
  const preset = TAIL_PRESETS[config.tail];
  const tailLayer = given.get("tail") ?? 0;
  const wins = (key: string) => {
    const layer = given.get(key);
    return layer !== undefined && layer >= tailLayer;
  };
  const overridden = {
    ageing: wins("ageing"),
    maxPause: wins("max-pause"),
    tierPacking: wins("tier-packing"),
  };
  if (!overridden.ageing) config.ageingMs = preset.ageingMs;
  if (!overridden.maxPause) config.maxPauseMs = preset.maxPauseMs;
  if (!overridden.tierPacking) config.tierPacking = preset.tierPacking;
  config.boundsOverridden = overridden;
}

/**
 * `--tail bounded (ageing 240 s, max pause 300 s)`, ` given` after an overridden half; the tier
 * packing is named when it packs under the GPU or was given.
 */
export function describeBounds(b: TailFields): string {
  const given = (o: boolean) => (o ? " given" : "");
  const packing =
    b.tierPacking === "gpu" || b.boundsOverridden.tierPacking
      ? `, tier packing ${b.tierPacking}${given(b.boundsOverridden.tierPacking)}`
      : "";
  return `--tail ${b.tail} (ageing ${s(b.ageingMs)}${given(b.boundsOverridden.ageing)}, max pause ${s(b.maxPauseMs)}${given(b.boundsOverridden.maxPause)}${packing})`;
}

/** `--tier-packing`: where a host tier holds the contexts, rotate or pack under the GPU. */
export const TIER_PACKING_SETTING = {
  key: "tier-packing",
  arg: "<rule>",
  help: "where a backend's host KV tier holds the contexts: rotate (admit what GPU and tier hold together; the engine rotates the programs, waits stay the engine's) or gpu (pack under the GPU's KV and hold the rest at their tool boundary, as ThunderAgent: more steps/min, waits up to the max pause)",
  defaultText: `from --tail (${TAIL_NAMES.map((t) => `${t}: ${TAIL_PRESETS[t].tierPacking}`).join(", ")})`,
  schema: oneOf(TIER_PACKINGS),
} satisfies Setting<TierPacking>;
