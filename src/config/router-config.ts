/**
 * `maitred serve`'s settings, each declared once (setting.ts): flags, `MAITRED_*` variables,
 * the YAML file, `--help`, config/README.md's flag table and the file's JSON Schema all come from this
 * table, so a setting cannot exist in one and not the others. Defaults follow ThunderAgent's
 * CLI unless noted; the scheduler's numbers come from the core's own defaults so router and
 * simulator agree.
 */
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import type { Placement, PriorityPolicy, QueuePolicy, RouterMode } from "../core/api.ts";
import { PRIORITY_POLICIES, QUEUE_POLICIES } from "../core/api.ts";
import { DEFAULT_SCHEDULER_CONFIG } from "../core/scheduler-config.ts";
import { type RawSimBackendOptions, simBlockSchema } from "../sim-server/options.ts";
import { LOG_LEVELS, type LogLevel } from "../util/logger.ts";
import { budgetsSchema, DEFAULT_BUDGETS, type RouterBudgets } from "./budget-section.ts";
import { IDENTITY_SOURCES, type IdentitySource, identityOrderSchema } from "./identity-sources.ts";
import { DEFAULT_PRIORITY, prioritySchema, type RouterPriority } from "./priority-section.ts";
import { defaultOf, type Setting } from "./setting.ts";
import {
  DEFAULT_TAIL,
  fromTail,
  TAIL_PRESETS,
  TAIL_SETTING,
  type TailPreset,
} from "./tail-preset.ts";
import {
  boolean,
  byteSize,
  duration,
  httpUrl,
  integer,
  list,
  nonNegative,
  oneOf,
  parsedText,
  text,
  textMatching,
} from "./values.ts";

export interface RouterConfig {
  host: string;
  port: number;
  /** Backend base URLs (no `/v1`); empty when `simBackends` > 0 until they are started. */
  backends: string[];
  /** `--backends sim:N`: start N simulated backends in-process. */
  simBackends: number;
  router: RouterMode;
  /**
   * `--shadow`: requests are routed as `--router default` routes them (whatever `router`
   * says) while a tr core beside it records the decisions it would have made (src/shadow).
   */
  shadow: boolean;
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
  /** `--tail`: the named bounds; `ageingMs` and `maxPauseMs` are those in force. */
  tail: TailPreset;
  maxPauseMs: number;
  /** Which of `ageingMs` / `maxPauseMs` a layer gave explicitly, over the preset. */
  boundsOverridden: { ageing: boolean; maxPause: boolean };
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
  /** `--final-grace`: a likely-done program is released this long after its answer (0 = off). */
  finalGraceMs: number;
  progressIntervalTokens: number;
  unhealthyAfterFailures: number;
  upstreamTimeoutMs: number;
  pollTimeoutMs: number;
  pollConcurrency: number;
  upstreamConnections: number;
  shutdownGraceMs: number;
  /** `--drain`: how long a stopping cell serves the programs it has before it stops. */
  drainMs: number;
  /** `--cell`: this router's name in ids, metrics and logs when several run side by side. */
  cell: string;
  /** `--hold-keepalive`: a held stream gets its SSE head at once and a comment every 15 s. */
  holdKeepalive: "on" | "off";
  /** `--access-log`: one log line per finished request at info. */
  accessLog: "on" | "off";
  /** `--admin-token`: the bearer token of the admin routes; null = loopback clients only. */
  adminToken: string | null;
  /** `--kv-bytes-per-token`: the model's KV bytes per token; null = not given. */
  kvBytesPerToken: number | null;
  /** `--host-kv-tokens`: each backend's host KV tier in tokens, where its engine does not say. */
  hostKvTokens: HostKvTokens | null;
  identityOrder: IdentitySource[];
  /** Options handed to each simulated backend (`sim:` block of the YAML file). */
  sim: RawSimBackendOptions;
  /** Priority classes and tenants; off by default. */
  priority: RouterPriority;
  /** The config file's `budgets:` section: default and per-tenant program budgets. */
  budgets: RouterBudgets;
  /** `--queue-policy`: overrides the section's `queue_policy`; null = the section's or `ta`. */
  queuePolicy: QueuePolicy | null;
  /** `--priority-policy`: overrides `priority_policy`; null = the section's or `constant`. */
  priorityPolicy: PriorityPolicy | null;
}

/** A serve setting and the `RouterConfig` field it fills. */
export type RouterSetting = Setting & { prop: keyof RouterConfig };

/** ThunderAgent's httpx timeout for backend calls, in seconds. */
const UPSTREAM_TIMEOUT_S = 900;
/** ThunderAgent's metrics client timeout, in seconds. */
const POLL_TIMEOUT_S = 10;
/** Limit of concurrent metric polls per tick; enough for a node's DP replicas at once. */
const POLL_CONCURRENCY = 8;
/** How long in-flight streams may run after SIGTERM before they are cancelled, in seconds. */
const SHUTDOWN_GRACE_S = 30;
/**
 * Two health checks of a balancer polling each second take a stopping cell out of its ring;
 * ten seconds covers them and the requests already on their way.
 */
const DRAIN_S = 10;
/** A cell's name: what HAProxy takes as a server name, and safe in a label and a log line. */
export const CELL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;
/** Upper bound for `sim:N`: each simulated backend is a server in this process. */
const MAX_SIM_BACKENDS = 64;

const sched = DEFAULT_SCHEDULER_CONFIG;
const seconds = (ms: number) => ms / 1000;

/** What `--backends` gives: base URLs, or a count of simulated backends to start. */
export interface ParsedBackends {
  backends: string[];
  simBackends: number;
}

/**
 * `--backends`: comma-separated base URLs (no `/v1`), or `sim:N` to start N simulated backends
 * in-process. URLs lose a trailing slash because the URL is the backend's id everywhere.
 */
const backendsSchema = list().transform((items, ctx): ParsedBackends => {
  const sim = items.length === 1 ? /^sim:(\d+)$/.exec(items[0]) : null;
  if (sim) {
    const n = Number(sim[1]);
    if (n < 1 || n > MAX_SIM_BACKENDS) {
      ctx.issues.push({
        code: "custom",
        message: `sim:N needs 1 ≤ N ≤ ${MAX_SIM_BACKENDS}, got ${n}`,
        input: items,
      });
      return z.NEVER;
    }
    return { backends: [], simBackends: n };
  }
  const backends: string[] = [];
  for (const item of items) {
    const r = httpUrl().safeParse(item);
    if (!r.success) {
      ctx.issues.push({
        code: "custom",
        message: r.error.issues[0].message,
        input: items,
      });
      return z.NEVER;
    }
    if (backends.includes(r.data)) {
      ctx.issues.push({ code: "custom", message: `lists ${r.data} twice`, input: items });
      return z.NEVER;
    }
    backends.push(r.data);
  }
  return { backends, simBackends: 0 };
});

/**
 * `--host-kv-tokens`: tokens of KV each backend's host tier holds. One number is every
 * backend's; `URL=N,URL=N` names them one by one (a backend not named has none given).
 */
export interface HostKvTokens {
  all: number | null;
  byBackend: Record<string, number>;
}

function tokensOf(raw: string): number {
  const n = Number(raw.trim());
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error(`"${raw}" is not a whole number of tokens ≥ 1`);
  return n;
}

export function parseHostKvTokens(raw: string): HostKvTokens {
  if (!raw.includes("=")) return { all: tokensOf(raw), byBackend: {} };
  const byBackend: Record<string, number> = {};
  for (const item of raw.split(",")) {
    const at = item.lastIndexOf("=");
    if (at < 0) throw new Error(`"${item}" is not URL=tokens`);
    const url = httpUrl().safeParse(item.slice(0, at).trim());
    if (!url.success) throw new Error(`"${item}": ${url.error.issues[0].message}`);
    if (url.data in byBackend) throw new Error(`names ${url.data} twice`);
    byBackend[url.data] = tokensOf(item.slice(at + 1));
  }
  return { all: null, byBackend };
}

/** A bearer token long enough not to be guessed. */
const adminTokenSchema = textMatching(/^\S{16,}$/, "must be at least 16 characters without spaces");

/** How much a process logs; serve and sim-backend share it. */
export const LOG_LEVEL_SETTING = {
  key: "log-level",
  arg: "<level>",
  help: LOG_LEVELS.join(", "),
  default: "info",
  schema: oneOf(LOG_LEVELS),
} satisfies Setting<LogLevel>;

export const ROUTER_SETTINGS: readonly RouterSetting[] = [
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
    key: "max-body-size",
    prop: "maxBodySize",
    arg: "<bytes>",
    help: "largest accepted request body (e.g. 32MiB)",
    default: "32MiB",
    schema: byteSize(),
  },
  {
    key: "max-buffered-bytes",
    prop: "maxBufferedBytes",
    arg: "<bytes>",
    help: "request bytes held at once across all requests; past it new bodies get 503 with Retry-After",
    defaultText: "a quarter of the heap limit",
    schema: byteSize(),
  },
  {
    key: "buffer-per-program",
    prop: "bufferPerProgram",
    arg: "<tokens>",
    help: "headroom tokens per active program",
    default: sched.bufferPerProgram,
    schema: integer(0, 1_000_000),
  },
  {
    key: "growth-headroom-steps",
    prop: "growthHeadroomSteps",
    arg: "<n>",
    help: "headroom per program in steps of its learned context growth, capped at 8192 tokens; programs without two steps use the median growth of the last 101 steps of all programs (0 = flat --buffer-per-program)",
    default: sched.growthHeadroomSteps,
    schema: nonNegative(),
  },
  {
    key: "ageing",
    prop: "ageingMs",
    arg: "<seconds>",
    help: "a request paused this long gets room made for it (0 = off)",
    defaultText: fromTail("ageingMs"),
    schema: duration({ allowZero: true }),
  },
  {
    key: "lend-after",
    prop: "lendAfterToolTimes",
    arg: "<x>",
    help: "lend a program's room to waiting work once its tool call has run x times its learned tool time (its own average, else the median of the last 101 tool calls, else 60 s; 0 = never)",
    default: sched.lendAfterToolTimes,
    schema: nonNegative(),
  },
  {
    key: "lend-max-hold",
    prop: "lendMaxHoldMs",
    arg: "<seconds>",
    help: "a program expected to stay in its tool call longer than this lends its room at once, and none holds it longer",
    default: seconds(sched.lendMaxHoldMs),
    schema: duration({ allowZero: true }),
  },
  {
    key: "final-grace",
    prop: "finalGraceMs",
    arg: "<seconds>",
    help: "an answer with finish_reason stop and no tool call marks its program likely done: its room is lent at once and it is released this long after unless it sends again (0 = off)",
    default: seconds(sched.finalGraceMs),
    schema: duration({ allowZero: true }),
  },
  {
    key: "progress-interval-tokens",
    prop: "progressIntervalTokens",
    arg: "<n>",
    help: "streamed tokens between book updates",
    default: sched.progressIntervalTokens,
    schema: integer(1, 1_000_000),
  },
  {
    key: "unhealthy-after-failures",
    prop: "unhealthyAfterFailures",
    arg: "<n>",
    help: "consecutive failed polls or forwards before a backend is unhealthy (a refused or reset forward: at once, when another backend is healthy)",
    default: sched.unhealthyAfterFailures,
    schema: integer(1, 1000),
  },
  {
    key: "upstream-timeout",
    prop: "upstreamTimeoutMs",
    arg: "<seconds>",
    help: "backend headers/body idle timeout",
    default: UPSTREAM_TIMEOUT_S,
    schema: duration(),
  },
  {
    key: "poll-timeout",
    prop: "pollTimeoutMs",
    arg: "<seconds>",
    help: "backend metrics poll timeout",
    default: POLL_TIMEOUT_S,
    schema: duration(),
  },
  {
    key: "poll-concurrency",
    prop: "pollConcurrency",
    arg: "<n>",
    help: "concurrent metric polls",
    default: POLL_CONCURRENCY,
    schema: integer(1, 1024),
  },
  {
    key: "upstream-connections",
    prop: "upstreamConnections",
    arg: "<n>",
    help: "keep-alive connections per backend (0 = unlimited)",
    default: 0,
    schema: integer(0, 1_000_000),
  },
  {
    key: "admin-token",
    prop: "adminToken",
    arg: "<token>",
    help: "bearer token of the admin routes (GET /programs, /programs/:id, /backends, /profiles, /ui; the page takes it as ?token=); without it they answer loopback clients only",
    defaultText: "none",
    secret: true,
    schema: adminTokenSchema,
  },
  {
    key: "kv-bytes-per-token",
    prop: "kvBytesPerToken",
    arg: "<bytes>",
    help: "the served model's KV bytes per token (2 × layers × KV heads × head size × dtype bytes), to size a vLLM host KV tier from its kv_offloading_size GiB",
    defaultText: "none (a vLLM tier's size stays unknown)",
    schema: integer(1, 1 << 30),
  },
  {
    key: "host-kv-tokens",
    prop: "hostKvTokens",
    arg: "<tokens|URL=tokens,...>",
    help: "tokens of KV each backend's host tier holds, for engines that do not say (vLLM without --kv-bytes-per-token, LMCache); one number for all or URL=tokens per backend",
    defaultText: "none",
    schema: parsedText(parseHostKvTokens),
  },
  {
    key: "shutdown-grace",
    prop: "shutdownGraceMs",
    arg: "<seconds>",
    help: "time in-flight streams get after SIGTERM",
    default: SHUTDOWN_GRACE_S,
    schema: duration({ allowZero: true }),
  },
  {
    key: "drain",
    prop: "drainMs",
    arg: "<seconds>",
    help: "after SIGTERM, how long the router goes on serving the programs it has while /health answers 503 and new programs get 503 with Retry-After (a balancer moves them to another cell); it stops sooner once nothing is in flight; then --shutdown-grace applies",
    default: DRAIN_S,
    schema: duration({ allowZero: true }),
  },
  {
    key: "cell",
    prop: "cell",
    arg: "<name>",
    help: "this router's name among several behind one balancer, carried by its request ids, /metrics (maitred_cell_info), logs and /health",
    defaultText: "the host name",
    schema: textMatching(
      CELL_NAME,
      "must be 1–63 letters, digits, '.', '_' or '-', starting with a letter or digit",
    ),
  },
  {
    key: "hold-keepalive",
    prop: "holdKeepalive",
    arg: "<mode>",
    help: "on: a held streaming request gets its 200 and SSE head at once, then a comment with its queue position every 15 s, so idle timeouts do not cut it; off: nothing is sent until it is seated",
    default: "on",
    schema: oneOf(["on", "off"]),
  },
  {
    key: "access-log",
    prop: "accessLog",
    arg: "<mode>",
    help: "on: one log line at info per finished request (request id, status, program, class, backend, time held, time to first token, duration, tokens, error code); off: none",
    default: "on",
    schema: oneOf(["on", "off"]),
  },
  {
    key: "identity-order",
    prop: "identityOrder",
    arg: "<sources>",
    help: `program id sources, first match wins (${IDENTITY_SOURCES.join(",")})`,
    default: IDENTITY_SOURCES,
    schema: identityOrderSchema,
  },
  {
    key: "priority",
    prop: "priority",
    help: "turn on priority classes and tenants (built-in class defaults, or the config file's priority: section)",
    defaultText: "off",
    schema: prioritySchema,
  },
  {
    key: "queue-policy",
    prop: "queuePolicy",
    arg: "<policy>",
    help: "order within a priority class: ta, fcfs, priority-fcfs or sjf (with priorities on)",
    defaultText: "ta",
    schema: oneOf(QUEUE_POLICIES),
  },
  {
    key: "priority-policy",
    prop: "priorityPolicy",
    arg: "<policy>",
    help: "priority score within a class: constant or slo-based (with priorities on)",
    defaultText: "constant",
    schema: oneOf(PRIORITY_POLICIES),
  },
  {
    key: "budgets",
    prop: "budgets",
    help: "program budgets (steps, tokens, wall) by default and per tenant; a request's x-maitred-budget header may only lower them",
    defaultText: "none",
    fileOnly: true,
    schema: budgetsSchema,
  },
  {
    key: "sim",
    prop: "sim",
    help: "options of the simulated backends of --backends sim:N, by maitred sim-backend's flag names",
    fileOnly: true,
    schema: simBlockSchema,
  },
];

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
    sim: {},
    priority: DEFAULT_PRIORITY,
    budgets: DEFAULT_BUDGETS,
    queuePolicy: null,
    priorityPolicy: null,
    ageingMs: TAIL_PRESETS[DEFAULT_TAIL].ageingMs,
    maxPauseMs: TAIL_PRESETS[DEFAULT_TAIL].maxPauseMs,
    boundsOverridden: { ageing: false, maxPause: false },
  };
  for (const s of ROUTER_SETTINGS) {
    const value = defaultOf(s);
    if (value === undefined) continue;
    if (s.prop === "backends") Object.assign(config, value as ParsedBackends);
    else config[s.prop] = value;
  }
  return config as unknown as RouterConfig;
})();
