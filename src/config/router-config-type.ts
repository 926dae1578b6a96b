/**
 * What `maitred serve` runs with: the shape every layer of its configuration fills (flags,
 * `MAITRED_*` variables, the YAML file, the built-in defaults), and the declaration of one
 * setting that fills one field of it.
 */
import type { Placement, PriorityPolicy, QueuePolicy, RouterMode } from "../core/api.ts";
import type { EngineOrderName } from "../core/records.ts";
import type { TierPacking } from "../core/scheduler-constants.ts";
import type { RawSimBackendOptions } from "../sim-server/options.ts";
import type { LogLevel } from "../util/logger.ts";
import type { EnginePriority, HostKvTokens } from "./backends-setting.ts";
import type { RouterBudgets } from "./budget-section.ts";
import type { IdentitySource } from "./identity-sources.ts";
import type { RouterPriority } from "./priority-section.ts";
import type { Setting } from "./setting.ts";
import type { TailPreset } from "./tail-preset.ts";

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
  /** `--tier-packing`: where a host tier holds the contexts, rotate or pack under the GPU. */
  tierPacking: TierPacking;
  /** Which of `ageingMs` / `maxPauseMs` / `tierPacking` a layer gave explicitly, over the preset. */
  boundsOverridden: { ageing: boolean; maxPause: boolean; tierPacking: boolean };
  idleTimeoutMs: number;
  placement: Placement;
  /** `--engine-order`: the order handed to backends that schedule by priority. */
  engineOrder: EngineOrderName;
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
  /** `--engine-priority`: backends whose engines schedule by priority; null = none declared. */
  enginePriority: EnginePriority | null;
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
