/**
 * `maitred serve`'s settings, first part: where it listens, what it routes to and in which
 * mode, what it measures, and the scheduler's clock and bounds. The second part is
 * router-limits.ts; router-config.ts joins them in the order `--help` shows them. Defaults
 * follow ThunderAgent's CLI unless noted; the scheduler's numbers come from the core's own
 * defaults so router and simulator agree.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_ENGINE_ORDER } from "../core/engine-order.ts";
import {
  DEFAULT_SCHEDULER_CONFIG,
  ENGINE_ORDER_NAMES,
  ORDER_AGEING_TOKENS_PER_S,
} from "../core/scheduler-config.ts";
import { LOG_LEVELS, type LogLevel } from "../util/logger.ts";
import { backendsSchema } from "./backends-setting.ts";
import type { RouterSetting } from "./router-config-type.ts";
import type { Setting } from "./setting.ts";
import { fromTail, TAIL_SETTING, TIER_PACKING_SETTING } from "./tail-preset.ts";
import { boolean, duration, integer, nonNegative, oneOf, text } from "./values.ts";

const sched = DEFAULT_SCHEDULER_CONFIG;
const seconds = (ms: number) => ms / 1000;

/** How much a process logs; serve and sim-backend share it. */
export const LOG_LEVEL_SETTING = {
  key: "log-level",
  arg: "<level>",
  help: LOG_LEVELS.join(", "),
  default: "info",
  schema: oneOf(LOG_LEVELS),
} satisfies Setting<LogLevel>;

export const ROUTING_SETTINGS: readonly RouterSetting[] = [
  {
    key: "host",
    prop: "host",
    arg: "<host>",
    help: "bind address",
    default: "0.0.0.0",
    schema: text(),
  },
  {
    key: "port",
    prop: "port",
    arg: "<port>",
    help: "bind port (0 = any free port)",
    default: 8300,
    schema: integer(0, 65535),
  },
  {
    key: "backends",
    prop: "backends",
    arg: "<urls>",
    help: "comma-separated backend base URLs, or sim:N for N in-process simulated backends",
    default: "http://localhost:8000",
    schema: backendsSchema,
  },
  {
    key: "router",
    prop: "router",
    arg: "<mode>",
    help: "tr (capacity scheduling) or default (plain proxy)",
    default: "tr",
    schema: oneOf(["tr", "default"]),
  },
  {
    key: "shadow",
    prop: "shadow",
    help: "route as --router default does while a tr scheduler watches the same traffic and engines and records what it would have done (GET /shadow, maitred_shadow_* metrics, debug log); its decisions are never carried out",
    default: false,
    schema: boolean(),
  },
  {
    key: "backend-type",
    prop: "backendType",
    arg: "<type>",
    help: "vllm or sglang (selects the metrics client)",
    default: "vllm",
    schema: oneOf(["vllm", "sglang"]),
  },
  {
    key: "upstream-stream",
    prop: "upstreamStream",
    arg: "<mode>",
    help: "always (stream from the backend and rebuild plain answers, so the scheduler sees every request's tokens) or as-client (for a backend that cannot stream)",
    default: "always",
    schema: oneOf(["always", "as-client"]),
  },
  {
    key: "profile",
    prop: "profile",
    help: "record per-step timing (GET /profiles and a CSV)",
    default: false,
    schema: boolean(),
  },
  {
    key: "profile-dir",
    prop: "profileDir",
    arg: "<dir>",
    help: "directory of step_profiles.csv",
    default: join(tmpdir(), "maitred_profiles"),
    schema: text(),
  },
  {
    key: "metrics",
    prop: "metrics",
    help: "also poll backend engine metrics every --metrics-interval",
    default: false,
    schema: boolean(),
  },
  {
    key: "metrics-interval",
    prop: "metricsIntervalMs",
    arg: "<seconds>",
    help: "engine metrics polling period",
    default: 5,
    schema: duration(),
  },
  {
    key: "scheduler-interval",
    prop: "schedulerIntervalMs",
    arg: "<seconds>",
    help: "scheduler tick period (Δt)",
    default: 5,
    schema: duration(),
  },
  {
    key: "acting-token-weight",
    prop: "actingTokenWeight",
    arg: "<w>",
    help: "weight of ACTING programs' tokens in capacity",
    default: sched.actingTokenWeight,
    schema: nonNegative(),
  },
  {
    key: "use-acting-token-decay",
    prop: "useActingTokenDecay",
    help: "decay ACTING tokens by 2^-t in the resume calculation",
    default: false,
    schema: boolean(),
  },
  { ...LOG_LEVEL_SETTING, prop: "logLevel" },
  { ...TAIL_SETTING, prop: "tail" },
  { ...TIER_PACKING_SETTING, prop: "tierPacking" },
  {
    key: "max-pause",
    prop: "maxPauseMs",
    arg: "<seconds>",
    help: "the bound on every pause: a request held this long is seated, its backend over capacity by at most that program",
    defaultText: fromTail("maxPauseMs"),
    schema: duration(),
  },
  {
    key: "idle-timeout",
    prop: "idleTimeoutMs",
    arg: "<seconds>",
    help: "release a program idle this long",
    default: seconds(sched.idleTimeoutMs),
    schema: duration(),
  },
  {
    key: "placement",
    prop: "placement",
    arg: "<rule>",
    help: "best-fit or worst-fit resume placement",
    default: sched.placement,
    schema: oneOf(["best-fit", "worst-fit"]),
  },
  {
    key: "engine-order",
    prop: "engineOrder",
    arg: "<order>",
    help: `the order handed to backends that schedule by priority (--engine-priority): ${ENGINE_ORDER_NAMES.join(", ")}; each is the arrival at the router plus an offset capped by the tail bound (arrival: none; smallest: the context at ${ORDER_AGEING_TOKENS_PER_S} tokens/s; uncached: what the engine must still prefill, at that rate; auto: smallest where a pause costs a re-prefill, arrival where the backend's host tier holds the contexts)`,
    default: DEFAULT_ENGINE_ORDER,
    schema: oneOf(ENGINE_ORDER_NAMES),
  },
];
