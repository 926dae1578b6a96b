/**
 * `maitred serve`'s settings, second part: its limits, headroom and lending, timeouts and
 * connections, the admin token, host KV tiers, shutdown and cells, logs, identity, priorities
 * and budgets. The first part is router-settings.ts.
 */
import { PRIORITY_POLICIES, QUEUE_POLICIES } from "../core/api.ts";
import { DEFAULT_SCHEDULER_CONFIG } from "../core/scheduler-config.ts";
import { simBlockSchema } from "../sim-server/options.ts";
import { parseEnginePriority, parseHostKvTokens } from "./backends-setting.ts";
import { budgetsSchema } from "./budget-section.ts";
import { IDENTITY_SOURCES, identityOrderSchema } from "./identity-sources.ts";
import { prioritySchema } from "./priority-section.ts";
import type { RouterSetting } from "./router-config-type.ts";
import { fromTail } from "./tail-preset.ts";
import {
  byteSize,
  duration,
  integer,
  nonNegative,
  oneOf,
  parsedText,
  textMatching,
} from "./values.ts";

const sched = DEFAULT_SCHEDULER_CONFIG;
const seconds = (ms: number) => ms / 1000;
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

/** A bearer token long enough not to be guessed. */
const adminTokenSchema = textMatching(/^\S{16,}$/, "must be at least 16 characters without spaces");

export const LIMIT_SETTINGS: readonly RouterSetting[] = [
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
    key: "engine-priority",
    prop: "enginePriority",
    arg: "<polarity|URL=polarity,...>",
    help: "the backends whose engines schedule by priority, and which values they serve first: lower-first (vLLM --scheduling-policy priority; SGLang with --schedule-low-priority-values-first) or higher-first (SGLang --enable-priority-scheduling); one for all or URL=polarity per backend. Each request to them carries the --engine-order as its priority field (not on /v1/messages); other backends never get the field. sim:N backends started with scheduling-policy: priority in the config file's sim: block declare themselves. A request on /v1/messages carries none and the engine reads its default (vLLM: 0, ahead of every ordered request; SGLang: the lowest)",
    defaultText: "none",
    schema: parsedText(parseEnginePriority),
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
