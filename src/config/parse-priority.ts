/**
 * The `priority:` section of the config file and its `--priority` switch. What is
 * decided where:
 *   - the shape and types (unknown keys, a class name that is not one, a number that is not a
 *     number, an API key given to two tenants) are a `ConfigError` at startup naming the field:
 *     such a file was never going to mean what its author wanted;
 *   - whether the values make a workable configuration (each `reserved_share` in 0..1, the
 *     shares summing to at most 1) is the core's check: it logs every error and runs without
 *     priorities (a broken priority config never takes
 *     routing down).
 */
import type {
  PriorityClassSettings,
  PriorityConfig,
  PriorityPolicy,
  QueuePolicy,
} from "../core/api.ts";
import {
  isPriorityClass,
  PRIORITY_CLASSES,
  PRIORITY_POLICIES,
  type PriorityClass,
  QUEUE_POLICIES,
} from "../core/api.ts";
import { ConfigError } from "../errors.ts";
import {
  fail,
  parseBoolean,
  parseDurationMs,
  parseEnum,
  parseInteger,
  parseList,
  parseMapping,
  parseNonNegative,
  type ValueSource,
} from "./parse-value.ts";

export interface RouterPriority {
  /** `--priority`, `MAITRED_PRIORITY`, or a `priority:` section (unless `enabled: false`). */
  enabled: boolean;
  /** Handed to the core as `SchedulerConfig.priority`; `{}` = the built-in class defaults. */
  core: PriorityConfig;
  /** Tenant id → the highest class its requests may use. */
  tenants: Record<string, PriorityClass>;
  /** Bearer API key → tenant id. */
  apiKeys: Record<string, string>;
  /** Ceiling of a request with no known tenant (no tenant header, unknown id, unmapped key). */
  defaultMaxClass: PriorityClass;
  /** Whether `x-tenant-id` is believed; false = only mapped API keys name a tenant. */
  trustTenantHeader: boolean;
  /**
   * Once any API key is mapped: the ceiling of a request without a mapped key, lowered further
   * to the lowest ceiling a mapped key gives, so that leaving the key out never raises it.
   */
  anonymousMaxClass: PriorityClass;
}

/**
 * `system` is for the control plane: a request
 * that names no known tenant may ask for anything up to `interactive`; reaching `system` takes a
 * tenant whose `max_class` is `system`.
 */
export const DEFAULT_MAX_CLASS: PriorityClass = "interactive";

export const DEFAULT_PRIORITY: RouterPriority = {
  enabled: false,
  core: {},
  tenants: {},
  apiKeys: {},
  defaultMaxClass: DEFAULT_MAX_CLASS,
  // Any client can write a header; a tenant is named by a key the operator handed out.
  trustTenantHeader: false,
  anonymousMaxClass: "default",
};

/** Either a switch (flag, env twin, `priority: true`) or a whole section (YAML mapping). */
export type PriorityValue =
  | { kind: "switch"; enabled: boolean }
  | { kind: "section"; priority: RouterPriority };

const SECTION_KEYS = [
  "enabled",
  "queue_policy",
  "priority_policy",
  "age_weight",
  "default_max_class",
  "trust_tenant_header",
  "anonymous_max_class",
  "classes",
  "tenants",
] as const;
const CLASS_KEYS = ["reserved_share", "queue_depth", "queue_timeout", "starvation", "preempt"];
const TENANT_KEYS = ["max_class", "api_keys"];
/** Largest accepted queue depth: beyond this a queue is no limit at all. */
const MAX_QUEUE_DEPTH = 1_000_000;

const at = (src: ValueSource, field: string): ValueSource => ({
  field: `${src.field}.${field}`,
  origin: src.origin,
});

function checkKeys(doc: Record<string, unknown>, known: readonly string[], src: ValueSource) {
  for (const key of Object.keys(doc)) {
    if (!known.includes(key)) {
      throw new ConfigError(
        `${src.field}.${key}`,
        `unknown setting (from ${src.origin}); known: ${known.join(", ")}`,
      );
    }
  }
}

function parseClassName(raw: unknown, src: ValueSource): PriorityClass {
  return parseEnum(raw, src, PRIORITY_CLASSES);
}

function parseClass(raw: unknown, src: ValueSource): Partial<PriorityClassSettings> {
  const doc = parseMapping(raw ?? {}, src);
  checkKeys(doc, CLASS_KEYS, src);
  // Only the keys given: the core fills the rest from its defaults (an explicit undefined
  // would override them).
  const out: Partial<PriorityClassSettings> = {};
  if (doc.reserved_share !== undefined)
    out.reservedShare = parseNonNegative(doc.reserved_share, at(src, "reserved_share"));
  if (doc.queue_depth !== undefined)
    out.queueDepth = parseInteger(doc.queue_depth, at(src, "queue_depth"), 0, MAX_QUEUE_DEPTH);
  if (doc.queue_timeout !== undefined)
    out.queueTimeoutMs = parseDurationMs(doc.queue_timeout, at(src, "queue_timeout"));
  if (doc.starvation !== undefined)
    out.starvationMs = parseDurationMs(doc.starvation, at(src, "starvation"), true);
  if (doc.preempt !== undefined) out.preempt = parseBoolean(doc.preempt, at(src, "preempt"));
  return out;
}

function parseTenants(raw: unknown, src: ValueSource, p: RouterPriority): void {
  const doc = parseMapping(raw, src);
  for (const [id, value] of Object.entries(doc)) {
    const tsrc = at(src, id);
    const t = parseMapping(value, tsrc);
    checkKeys(t, TENANT_KEYS, tsrc);
    if (t.max_class === undefined) fail(at(tsrc, "max_class"), "is required", t.max_class);
    p.tenants[id] = parseClassName(t.max_class, at(tsrc, "max_class"));
    if (t.api_keys === undefined) continue;
    for (const key of parseList(t.api_keys, at(tsrc, "api_keys"))) {
      const owner = p.apiKeys[key];
      if (owner !== undefined) {
        // The key itself stays out of the message: it is a secret.
        throw new ConfigError(
          `${tsrc.field}.api_keys`,
          `an API key is also listed under tenant ${owner} (from ${src.origin})`,
        );
      }
      p.apiKeys[key] = id;
    }
  }
}

function parseSection(raw: unknown, src: ValueSource): RouterPriority {
  const p: RouterPriority = structuredClone(DEFAULT_PRIORITY);
  p.enabled = true;
  const doc = parseMapping(raw ?? {}, src);
  checkKeys(doc, SECTION_KEYS, src);
  if (doc.enabled !== undefined) p.enabled = parseBoolean(doc.enabled, at(src, "enabled"));
  if (doc.queue_policy !== undefined)
    p.core.queuePolicy = parseEnum(doc.queue_policy, at(src, "queue_policy"), QUEUE_POLICIES);
  if (doc.priority_policy !== undefined) {
    p.core.priorityPolicy = parseEnum(
      doc.priority_policy,
      at(src, "priority_policy"),
      PRIORITY_POLICIES,
    );
  }
  // Score per second waited (the age weight); the core counts per millisecond.
  if (doc.age_weight !== undefined)
    p.core.ageWeightPerMs = parseNonNegative(doc.age_weight, at(src, "age_weight")) / 1000;
  if (doc.default_max_class !== undefined)
    p.defaultMaxClass = parseClassName(doc.default_max_class, at(src, "default_max_class"));
  if (doc.trust_tenant_header !== undefined)
    p.trustTenantHeader = parseBoolean(doc.trust_tenant_header, at(src, "trust_tenant_header"));
  if (doc.anonymous_max_class !== undefined)
    p.anonymousMaxClass = parseClassName(doc.anonymous_max_class, at(src, "anonymous_max_class"));
  if (doc.classes !== undefined && doc.classes !== null) {
    const csrc = at(src, "classes");
    const classes = parseMapping(doc.classes, csrc);
    p.core.classes = {};
    for (const [name, value] of Object.entries(classes)) {
      if (!isPriorityClass(name)) {
        throw new ConfigError(
          `${csrc.field}.${name}`,
          `unknown class (from ${src.origin}); classes: ${PRIORITY_CLASSES.join(", ")}`,
        );
      }
      p.core.classes[name] = parseClass(value, at(csrc, name));
    }
  }
  if (doc.tenants !== undefined && doc.tenants !== null)
    parseTenants(doc.tenants, at(src, "tenants"), p);
  return p;
}

/**
 * The `priority` setting: a boolean from a flag, an environment twin or the file switches
 * priorities on or off; a mapping (or an empty `priority:`) in the file is the whole section.
 */
export function parsePriority(raw: unknown, src: ValueSource): PriorityValue {
  if (raw === null || (typeof raw === "object" && !Array.isArray(raw))) {
    return { kind: "section", priority: parseSection(raw, src) };
  }
  if (typeof raw === "boolean" || typeof raw === "string")
    return { kind: "switch", enabled: parseBoolean(raw, src) };
  return fail(src, "must be true/false or a mapping (the priority section)", raw);
}

/** `--queue-policy` / `--priority-policy`: a named policy (null default = the section's). */
export const parseQueuePolicy = (raw: unknown, src: ValueSource) =>
  parseEnum(raw, src, QUEUE_POLICIES);
export const parsePriorityPolicy = (raw: unknown, src: ValueSource) =>
  parseEnum(raw, src, PRIORITY_POLICIES);

/**
 * The core's `SchedulerConfig.priority`: undefined while priorities are off; the flags'
 * policies win over the section's.
 */
export function corePriorityOf(
  p: RouterPriority,
  queuePolicy: QueuePolicy | null,
  priorityPolicy: PriorityPolicy | null,
): PriorityConfig | undefined {
  if (!p.enabled) return undefined;
  const core: PriorityConfig = { ...p.core };
  if (queuePolicy !== null) core.queuePolicy = queuePolicy;
  if (priorityPolicy !== null) core.priorityPolicy = priorityPolicy;
  return core;
}
