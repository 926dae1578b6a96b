/**
 * The router's one configuration schema: every setting with its
 * default, its flag, its environment twin and its parser. Flags, `MAITRED_*` variables and the
 * YAML file are all read through this table, so a setting cannot exist in one and not the others.
 * Defaults follow ThunderAgent's CLI unless noted; the
 * scheduler's numbers come from the core's own defaults so router and simulator agree.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Placement, PriorityPolicy, QueuePolicy, RouterMode } from "../core/api.ts";
import { DEFAULT_SCHEDULER_CONFIG } from "../core/scheduler-config.ts";
import { ConfigError } from "../errors.ts";
import { resolveSimBackendOptions, SIM_BLOCK_KEYS } from "../sim-server/options.ts";
import { LOG_LEVELS, type LogLevel } from "../util/logger.ts";
import { IDENTITY_SOURCES, type IdentitySource, parseIdentityOrder } from "./identity-sources.ts";
import { parseBackends } from "./parse-backends.ts";
import {
  DEFAULT_PRIORITY,
  parsePriority,
  parsePriorityPolicy,
  parseQueuePolicy,
  type RouterPriority,
} from "./parse-priority.ts";
import {
  parseBoolean,
  parseByteSize,
  parseDurationMs,
  parseEnum,
  parseInteger,
  parseMapping,
  parseNonNegative,
  parseString,
  type ValueSource,
} from "./parse-value.ts";

export interface RouterConfig {
  host: string;
  port: number;
  /** Backend base URLs (no `/v1`); empty when `simBackends` > 0 until they are started. */
  backends: string[];
  /** `--backends sim:N`: start N simulated backends in-process. */
  simBackends: number;
  router: RouterMode;
  backendType: "vllm" | "sglang";
  upstreamStream: "always" | "as-client";
  profile: boolean;
  profileDir: string;
  metrics: boolean;
  metricsIntervalMs: number;
  schedulerIntervalMs: number;
  actingTokenWeight: number;
  useActingTokenDecay: boolean;
  logLevel: LogLevel;
  maxPauseMs: number;
  idleTimeoutMs: number;
  placement: Placement;
  maxBodySize: number;
  /** Request bytes held at once across all requests; null = a quarter of the heap limit. */
  maxBufferedBytes: number | null;
  bufferPerProgram: number;
  growthHeadroomSteps: number;
  ageingMs: number;
  lendAfterToolTimes: number;
  lendMaxHoldMs: number;
  progressIntervalTokens: number;
  unhealthyAfterFailures: number;
  upstreamTimeoutMs: number;
  pollTimeoutMs: number;
  pollConcurrency: number;
  upstreamConnections: number;
  shutdownGraceMs: number;
  /** `--admin-token`: the bearer token of the admin routes; null = loopback clients only. */
  adminToken: string | null;
  identityOrder: IdentitySource[];
  /** Options handed to each simulated backend (`sim:` block of the YAML file). */
  sim: Record<string, unknown>;
  /** Priority classes and tenants; off by default. */
  priority: RouterPriority;
  /** `--queue-policy`: overrides the section's `queue_policy`; null = the section's or `ta`. */
  queuePolicy: QueuePolicy | null;
  /** `--priority-policy`: overrides `priority_policy`; null = the section's or `constant`. */
  priorityPolicy: PriorityPolicy | null;
}

export interface FieldSpec {
  /** Key in the YAML file and flag name without dashes (`scheduler-interval`). */
  key: string;
  prop: keyof RouterConfig;
  /** Commander argument placeholder; absent for boolean switches. */
  arg?: string;
  help: string;
  /** Only settable in the YAML file (structured values). */
  fileOnly?: boolean;
  /** How `--help` shows the default, when printing the value would not say it. */
  defaultText?: string;
  parse(raw: unknown, src: ValueSource): unknown;
}

/** ThunderAgent's httpx timeout for backend calls. */
const UPSTREAM_TIMEOUT_S = 900;
/** ThunderAgent's metrics client timeout. */
const POLL_TIMEOUT_S = 10;
/** Limit of concurrent metric polls per tick; enough for a node's DP replicas at once. */
const POLL_CONCURRENCY = 8;
/** How long in-flight streams may run after SIGTERM before they are cancelled. */
const SHUTDOWN_GRACE_S = 30;

export const DEFAULT_CONFIG: RouterConfig = {
  host: "0.0.0.0",
  port: 8300,
  backends: ["http://localhost:8000"],
  simBackends: 0,
  router: "tr",
  backendType: "vllm",
  upstreamStream: "always",
  profile: false,
  profileDir: join(tmpdir(), "maitred_profiles"),
  metrics: false,
  metricsIntervalMs: 5000,
  schedulerIntervalMs: 5000,
  actingTokenWeight: DEFAULT_SCHEDULER_CONFIG.actingTokenWeight,
  useActingTokenDecay: false,
  logLevel: "info",
  maxPauseMs: DEFAULT_SCHEDULER_CONFIG.maxPauseMs,
  idleTimeoutMs: DEFAULT_SCHEDULER_CONFIG.idleTimeoutMs,
  placement: DEFAULT_SCHEDULER_CONFIG.placement,
  maxBodySize: 32 * 1024 * 1024,
  maxBufferedBytes: null,
  bufferPerProgram: DEFAULT_SCHEDULER_CONFIG.bufferPerProgram,
  growthHeadroomSteps: DEFAULT_SCHEDULER_CONFIG.growthHeadroomSteps,
  ageingMs: DEFAULT_SCHEDULER_CONFIG.ageingMs,
  lendAfterToolTimes: DEFAULT_SCHEDULER_CONFIG.lendAfterToolTimes,
  lendMaxHoldMs: DEFAULT_SCHEDULER_CONFIG.lendMaxHoldMs,
  progressIntervalTokens: DEFAULT_SCHEDULER_CONFIG.progressIntervalTokens,
  unhealthyAfterFailures: DEFAULT_SCHEDULER_CONFIG.unhealthyAfterFailures,
  upstreamTimeoutMs: UPSTREAM_TIMEOUT_S * 1000,
  pollTimeoutMs: POLL_TIMEOUT_S * 1000,
  pollConcurrency: POLL_CONCURRENCY,
  upstreamConnections: 0,
  shutdownGraceMs: SHUTDOWN_GRACE_S * 1000,
  adminToken: null,
  identityOrder: [...IDENTITY_SOURCES],
  sim: {},
  priority: DEFAULT_PRIORITY,
  queuePolicy: null,
  priorityPolicy: null,
};

const int = (min: number, max: number) => (raw: unknown, src: ValueSource) =>
  parseInteger(raw, src, min, max);

const camel = (key: string) => key.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * The `sim:` block: `maitred sim-backend`'s settings by their flag names, checked as that
 * command checks them, so a misspelt or bad one stops startup (and `config check`) instead of
 * being ignored. Kept as written: the simulated backends read it when they start.
 */
function parseSimBlock(raw: unknown, src: ValueSource): Record<string, unknown> {
  const block = parseMapping(raw, src);
  const options: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(block)) {
    if (!(SIM_BLOCK_KEYS as readonly string[]).includes(key)) {
      throw new ConfigError(
        `${src.field}.${key}`,
        `unknown setting (from ${src.origin}); known: ${SIM_BLOCK_KEYS.join(", ")}`,
      );
    }
    options[camel(key)] = value;
  }
  try {
    resolveSimBackendOptions(options, (field) => `${src.field}.${field} in ${src.origin}`);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(`${src.field}.${err.field}`, err.message.slice(err.field.length + 2));
  }
  return block;
}

export const FIELDS: readonly FieldSpec[] = [
  { key: "host", prop: "host", arg: "<host>", help: "bind address", parse: parseString },
  {
    key: "port",
    prop: "port",
    arg: "<port>",
    help: "bind port (0 = any free port)",
    parse: int(0, 65535),
  },
  {
    key: "backends",
    prop: "backends",
    arg: "<urls>",
    help: "comma-separated backend base URLs, or sim:N for N in-process simulated backends",
    parse: parseBackends,
  },
  {
    key: "router",
    prop: "router",
    arg: "<mode>",
    help: "tr (capacity scheduling) or default (plain proxy)",
    parse: (r, s) => parseEnum(r, s, ["tr", "default"] as const),
  },
  {
    key: "backend-type",
    prop: "backendType",
    arg: "<type>",
    help: "vllm or sglang (selects the metrics client)",
    parse: (r, s) => parseEnum(r, s, ["vllm", "sglang"] as const),
  },
  {
    key: "upstream-stream",
    prop: "upstreamStream",
    arg: "<mode>",
    help: "always (stream from the backend and rebuild plain answers, so the scheduler sees every request's tokens) or as-client (for a backend that cannot stream)",
    parse: (r, s) => parseEnum(r, s, ["always", "as-client"] as const),
  },
  {
    key: "profile",
    prop: "profile",
    help: "record per-step timing (GET /profiles and a CSV)",
    parse: parseBoolean,
  },
  {
    key: "profile-dir",
    prop: "profileDir",
    arg: "<dir>",
    help: "directory of step_profiles.csv",
    parse: parseString,
  },
  {
    key: "metrics",
    prop: "metrics",
    help: "also poll backend engine metrics every --metrics-interval",
    parse: parseBoolean,
  },
  {
    key: "metrics-interval",
    prop: "metricsIntervalMs",
    arg: "<seconds>",
    help: "engine metrics polling period",
    parse: (r, s) => parseDurationMs(r, s),
  },
  {
    key: "scheduler-interval",
    prop: "schedulerIntervalMs",
    arg: "<seconds>",
    help: "scheduler tick period (Δt)",
    parse: (r, s) => parseDurationMs(r, s),
  },
  {
    key: "acting-token-weight",
    prop: "actingTokenWeight",
    arg: "<w>",
    help: "weight of ACTING programs' tokens in capacity",
    parse: parseNonNegative,
  },
  {
    key: "use-acting-token-decay",
    prop: "useActingTokenDecay",
    help: "decay ACTING tokens by 2^-t in the resume calculation",
    parse: parseBoolean,
  },
  {
    key: "log-level",
    prop: "logLevel",
    arg: "<level>",
    help: LOG_LEVELS.join(", "),
    parse: (r, s) => parseEnum(r, s, LOG_LEVELS),
  },
  {
    key: "max-pause",
    prop: "maxPauseMs",
    arg: "<seconds>",
    help: "the bound on every pause: a request held this long is seated, its backend over capacity by at most that program",
    parse: (r, s) => parseDurationMs(r, s),
  },
  {
    key: "idle-timeout",
    prop: "idleTimeoutMs",
    arg: "<seconds>",
    help: "release a program idle this long",
    parse: (r, s) => parseDurationMs(r, s),
  },
  {
    key: "placement",
    prop: "placement",
    arg: "<rule>",
    help: "best-fit or worst-fit resume placement",
    parse: (r, s) => parseEnum(r, s, ["best-fit", "worst-fit"] as const),
  },
  {
    key: "max-body-size",
    prop: "maxBodySize",
    arg: "<bytes>",
    help: "largest accepted request body (e.g. 32MiB)",
    parse: parseByteSize,
  },
  {
    key: "max-buffered-bytes",
    prop: "maxBufferedBytes",
    arg: "<bytes>",
    help: "request bytes held at once across all requests; past it new bodies get 503 with Retry-After",
    defaultText: "a quarter of the heap limit",
    parse: parseByteSize,
  },
  {
    key: "buffer-per-program",
    prop: "bufferPerProgram",
    arg: "<tokens>",
    help: "headroom tokens per active program",
    parse: int(0, 1_000_000),
  },
  {
    key: "growth-headroom-steps",
    prop: "growthHeadroomSteps",
    arg: "<n>",
    help: "headroom per program in steps of its learned context growth, capped at 8192 tokens; programs without two steps use the median growth of the last 101 steps of all programs (0 = flat --buffer-per-program)",
    parse: (r, s) => parseNonNegative(r, s),
  },
  {
    key: "ageing",
    prop: "ageingMs",
    arg: "<seconds>",
    help: "a request paused this long gets room made for it (0 = off)",
    parse: (r, s) => parseDurationMs(r, s, true),
  },
  {
    key: "lend-after",
    prop: "lendAfterToolTimes",
    arg: "<x>",
    help: "lend a program's room to waiting work once its tool call has run x times its learned tool time (its own average, else the median of the last 101 tool calls, else 60 s; 0 = never)",
    parse: (r, s) => parseNonNegative(r, s),
  },
  {
    key: "lend-max-hold",
    prop: "lendMaxHoldMs",
    arg: "<seconds>",
    help: "a program expected to stay in its tool call longer than this lends its room at once, and none holds it longer",
    parse: (r, s) => parseDurationMs(r, s, true),
  },
  {
    key: "progress-interval-tokens",
    prop: "progressIntervalTokens",
    arg: "<n>",
    help: "streamed tokens between book updates",
    parse: int(1, 1_000_000),
  },
  {
    key: "unhealthy-after-failures",
    prop: "unhealthyAfterFailures",
    arg: "<n>",
    help: "consecutive failed polls or forwards before a backend is unhealthy (a refused or reset forward: at once, when another backend is healthy)",
    parse: int(1, 1000),
  },
  {
    key: "upstream-timeout",
    prop: "upstreamTimeoutMs",
    arg: "<seconds>",
    help: "backend headers/body idle timeout",
    parse: (r, s) => parseDurationMs(r, s),
  },
  {
    key: "poll-timeout",
    prop: "pollTimeoutMs",
    arg: "<seconds>",
    help: "backend metrics poll timeout",
    parse: (r, s) => parseDurationMs(r, s),
  },
  {
    key: "poll-concurrency",
    prop: "pollConcurrency",
    arg: "<n>",
    help: "concurrent metric polls",
    parse: int(1, 1024),
  },
  {
    key: "upstream-connections",
    prop: "upstreamConnections",
    arg: "<n>",
    help: "keep-alive connections per backend (0 = unlimited)",
    parse: int(0, 1_000_000),
  },
  {
    key: "admin-token",
    prop: "adminToken",
    arg: "<token>",
    help: "bearer token of the admin routes (GET /programs, /programs/:id, /backends, /profiles, /ui; the page takes it as ?token=); without it they answer loopback clients only",
    defaultText: "none",
    parse: (r, s) => {
      const token = parseString(r, s);
      if (token.length < 16 || /\s/.test(token))
        throw new ConfigError(
          s.field,
          `must be at least 16 characters without spaces (from ${s.origin})`,
        );
      return token;
    },
  },
  {
    key: "shutdown-grace",
    prop: "shutdownGraceMs",
    arg: "<seconds>",
    help: "time in-flight streams get after SIGTERM",
    parse: (r, s) => parseDurationMs(r, s, true),
  },
  {
    key: "identity-order",
    prop: "identityOrder",
    arg: "<sources>",
    help: `program id sources, first match wins (${IDENTITY_SOURCES.join(",")})`,
    parse: parseIdentityOrder,
  },
  {
    key: "priority",
    prop: "priority",
    help: "turn on priority classes and tenants (built-in class defaults, or the config file's priority: section)",
    defaultText: "off",
    parse: parsePriority,
  },
  {
    key: "queue-policy",
    prop: "queuePolicy",
    arg: "<policy>",
    help: "order within a priority class: ta, fcfs, priority-fcfs or sjf (with priorities on)",
    defaultText: "ta",
    parse: parseQueuePolicy,
  },
  {
    key: "priority-policy",
    prop: "priorityPolicy",
    arg: "<policy>",
    help: "priority score within a class: constant or slo-based (with priorities on)",
    defaultText: "constant",
    parse: parsePriorityPolicy,
  },
  {
    key: "sim",
    prop: "sim",
    help: "options for simulated backends",
    fileOnly: true,
    parse: parseSimBlock,
  },
];
