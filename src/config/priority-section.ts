/**
 * The `priority:` section of the config file and its `--priority` switch. What is
 * decided where:
 *   - the shape and types (unknown keys, a class name that is not one, a number that is not a
 *     number, an API key given to two tenants) are a `ConfigError` at startup naming the field:
 *     such a file was never going to mean what its author wanted;
 *   - whether the values make a workable configuration (each `reserved_share` in 0..1, the
 *     shares summing to at most 1) is the core's check: it logs every error and runs without
 *     priorities (a broken priority config never takes routing down).
 */
import { z } from "zod";
import type {
  PriorityClassSettings,
  PriorityConfig,
  PriorityPolicy,
  QueuePolicy,
} from "../core/api.ts";
import {
  PRIORITY_CLASSES,
  PRIORITY_POLICIES,
  type PriorityClass,
  QUEUE_POLICIES,
} from "../core/api.ts";
import { boolean, byKind, duration, integer, list, nonNegative, oneOf } from "./values.ts";

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
 * `system` is for the control plane: a request that names no known tenant may ask for
 * anything up to `interactive`; reaching `system` takes a tenant whose `max_class` is `system`.
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

/** Largest accepted queue depth: beyond this a queue is no limit at all. */
const MAX_QUEUE_DEPTH = 1_000_000;

const className = () => oneOf(PRIORITY_CLASSES);

/** A mapping whose unknown keys are named with the ones it knows. */
const section = <T extends z.ZodRawShape>(shape: T, what = "setting") =>
  z.strictObject(shape, {
    error: (iss) =>
      iss.code === "unrecognized_keys"
        ? `unknown ${what}; known: ${Object.keys(shape).join(", ")}`
        : "must be a mapping",
  });

const classSettings = section({
  reserved_share: nonNegative()
    .optional()
    .meta({ description: "share of every backend's capacity held for this class (0..1)" }),
  queue_depth: integer(0, MAX_QUEUE_DEPTH)
    .optional()
    .meta({ description: "requests the class's queue holds before answering 429" }),
  queue_timeout: duration()
    .optional()
    .meta({ description: "a queued request waiting this long is answered 408" }),
  starvation: duration({ allowZero: true })
    .optional()
    .meta({ description: "a request waiting this long is promoted (0 = never)" }),
  preempt: boolean()
    .optional()
    .meta({ description: "may pause lower classes' programs to take their room" }),
})
  .nullish()
  // Only the keys given: the core fills the rest from its defaults (an explicit undefined
  // would override them).
  .transform((c) => {
    const out: Partial<PriorityClassSettings> = {};
    if (c?.reserved_share !== undefined) out.reservedShare = c.reserved_share;
    if (c?.queue_depth !== undefined) out.queueDepth = c.queue_depth;
    if (c?.queue_timeout !== undefined) out.queueTimeoutMs = c.queue_timeout;
    if (c?.starvation !== undefined) out.starvationMs = c.starvation;
    if (c?.preempt !== undefined) out.preempt = c.preempt;
    return out;
  });

const classesSchema = section(
  Object.fromEntries(PRIORITY_CLASSES.map((c) => [c, classSettings.optional()])) as Record<
    PriorityClass,
    z.ZodOptional<typeof classSettings>
  >,
  "class",
);

const tenantSchema = section({
  max_class: className().meta({ description: "the highest class this tenant's requests get" }),
  api_keys: list().optional().meta({ description: "bearer API keys that name this tenant" }),
});

const sectionSchema = section({
  enabled: boolean().optional().meta({ description: "false keeps the section but turns it off" }),
  queue_policy: oneOf(QUEUE_POLICIES).optional().meta({ description: "order within a class" }),
  priority_policy: oneOf(PRIORITY_POLICIES)
    .optional()
    .meta({ description: "priority score within a class" }),
  age_weight: nonNegative()
    .optional()
    .meta({ description: "score a request gains per second waited" }),
  default_max_class: className()
    .optional()
    .meta({ description: "ceiling of a request that names no known tenant" }),
  trust_tenant_header: boolean()
    .optional()
    .meta({ description: "believe x-tenant-id (off: only mapped API keys name a tenant)" }),
  anonymous_max_class: className()
    .optional()
    .meta({ description: "once API keys are mapped: ceiling of a request without one" }),
  classes: classesSchema.nullish(),
  tenants: z
    .record(z.string(), tenantSchema, {
      error: "must be a mapping of tenant ids to their max_class and api_keys",
    })
    .nullish(),
})
  .nullable()
  .superRefine((doc, ctx) => {
    const owners = new Map<string, string>();
    for (const [id, t] of Object.entries(doc?.tenants ?? {})) {
      for (const key of t.api_keys ?? []) {
        const owner = owners.get(key);
        // The key itself stays out of the message: it is a secret.
        if (owner !== undefined) {
          ctx.addIssue({
            code: "custom",
            message: `an API key is also listed under tenant ${owner}`,
            path: ["tenants", id, "api_keys"],
          });
        }
        owners.set(key, id);
      }
    }
  })
  .transform((doc): RouterPriority => {
    const p: RouterPriority = structuredClone(DEFAULT_PRIORITY);
    p.enabled = doc?.enabled ?? true;
    if (doc?.queue_policy !== undefined) p.core.queuePolicy = doc.queue_policy;
    if (doc?.priority_policy !== undefined) p.core.priorityPolicy = doc.priority_policy;
    // Score per second waited (the age weight); the core counts per millisecond.
    if (doc?.age_weight !== undefined) p.core.ageWeightPerMs = doc.age_weight / 1000;
    if (doc?.default_max_class !== undefined) p.defaultMaxClass = doc.default_max_class;
    if (doc?.trust_tenant_header !== undefined) p.trustTenantHeader = doc.trust_tenant_header;
    if (doc?.anonymous_max_class !== undefined) p.anonymousMaxClass = doc.anonymous_max_class;
    if (doc?.classes) {
      p.core.classes = {};
      for (const c of PRIORITY_CLASSES) {
        const settings = doc.classes[c];
        if (settings !== undefined) p.core.classes[c] = settings;
      }
    }
    for (const [id, t] of Object.entries(doc?.tenants ?? {})) {
      p.tenants[id] = t.max_class;
      for (const key of t.api_keys ?? []) p.apiKeys[key] = id;
    }
    return p;
  });

/**
 * The `priority` setting: a boolean from a flag, an environment twin or the file switches
 * priorities on or off; a mapping (or an empty `priority:`) in the file is the whole section.
 */
export const prioritySchema = byKind<PriorityValue, PriorityValue>(
  (raw) => raw === null || (typeof raw === "object" && !Array.isArray(raw)),
  boolean("must be true/false or a mapping (the priority section)").transform((enabled) => ({
    kind: "switch",
    enabled,
  })),
  sectionSchema.transform((priority) => ({ kind: "section", priority })),
);

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
