import { AGEING_MS, MAX_PAUSE_MS } from "../scheduler-constants.ts";
import {
  CLASS_COUNT,
  isPriorityClass,
  PRIORITY_CLASSES,
  type PriorityClass,
} from "./priority-classes.ts";

/**
 * Priority configuration: per-class settings, the within-class queue policy and the priority
 * score policy. Optional in `SchedulerConfig` (absent = priorities off, `{}` = built-in
 * defaults). A config that does not validate never throws: the scheduler logs the errors and
 * runs without priorities (a broken priority config never takes routing down).
 */

/** Within-class orders exposed to users (`--queue-policy`). */
export const QUEUE_POLICIES = ["ta", "fcfs", "priority-fcfs", "sjf"] as const;
/** Score policies exposed to users (`--priority-policy`). */
export const PRIORITY_POLICIES = ["constant", "slo-based"] as const;
/** Seed 001's pathological templates: accepted by the core for tests, never offered by the CLI. */
export const TEST_ONLY_QUEUE_POLICIES = ["reverse-priority"] as const;
export const TEST_ONLY_PRIORITY_POLICIES = ["inverted-slo"] as const;

export type QueuePolicy =
  | (typeof QUEUE_POLICIES)[number]
  | (typeof TEST_ONLY_QUEUE_POLICIES)[number];
export type PriorityPolicy =
  | (typeof PRIORITY_POLICIES)[number]
  | (typeof TEST_ONLY_PRIORITY_POLICIES)[number];

export interface PriorityClassSettings {
  /** Share (0..1) of each backend's KV token capacity held for this class while it is unused. */
  reservedShare: number;
  /** Parked requests of this class at most; an arrival that would exceed it gets 429. */
  queueDepth: number;
  /** A request parked longer than this gets 408 (ms). */
  queueTimeoutMs: number;
  /** The head of this class's queue waiting longer than this is admitted next (ms). */
  starvationMs: number;
  /** May a request of this class that finds no room preempt one strictly lower-class program? */
  preempt: boolean;
}

/** The `priority` section as configured: everything optional, defaults fill the gaps. */
export interface PriorityConfig {
  classes?: Partial<Record<PriorityClass, Partial<PriorityClassSettings>>>;
  queuePolicy?: QueuePolicy;
  priorityPolicy?: PriorityPolicy;
  /** slo-based score per ms waited (the age weight). */
  ageWeightPerMs?: number;
}

/** The section with every default applied, per class in `PRIORITY_CLASSES` order. */
export interface ResolvedPriorityConfig {
  classes: readonly PriorityClassSettings[];
  queuePolicy: QueuePolicy;
  priorityPolicy: PriorityPolicy;
  ageWeightPerMs: number;
}

/**
 * Built-in class defaults. `system` and `interactive` keep the SMG gateway's defaults (queues of 64
 * and 256 requests, 30 s timeouts, 5 s starvation, preemption on). `default` and `bulk` get tr's
 * own bounds instead of the gateway's (512/1024 requests, 60/300 s timeouts, 30/120 s starvation):
 * a gateway's request waits for a slot that frees in seconds, but tr pauses an agent program
 * between turns for minutes by design (src/core/README.md "Evidence"), so the gateway's thresholds
 * turned every long pause into a starvation promotion or a 408. On the simulator at overload that
 * cost 61% of tr's steps/min with unlabeled agents and 21% with a chat + agent mix
 * (src/core/priority/README.md "Evidence"). So their starvation threshold is tr's ageing bound
 * (AGEING_MS, 240 s: a starved head is seated, room made for it) and their queue timeout is the
 * forced-resume bound (MAX_PAUSE_MS, 300 s), which the promotion keeps any wait under: the
 * default `--tail bounded` preset's values, which follow the bounds in force when the core has
 * them (`classDefaults` below).
 * Reservations there are slot floors; here they are KV shares, kept small because KV held idle for
 * a class is throughput lost by the others (the target: total steps/min ≥ 0.95× priorities off) and
 * preemption already closes the gap a reservation leaves.
 */
export const DEFAULT_CLASS_SETTINGS: Readonly<Record<PriorityClass, PriorityClassSettings>> =
  Object.freeze({
    system: {
      reservedShare: 0.02,
      queueDepth: 64,
      queueTimeoutMs: 30_000,
      starvationMs: 5_000,
      preempt: true,
    },
    interactive: {
      reservedShare: 0.08,
      queueDepth: 256,
      queueTimeoutMs: 30_000,
      starvationMs: 5_000,
      preempt: true,
    },
    default: {
      reservedShare: 0,
      queueDepth: 512,
      queueTimeoutMs: MAX_PAUSE_MS,
      starvationMs: AGEING_MS,
      preempt: false,
    },
    bulk: {
      reservedShare: 0,
      queueDepth: 1024,
      queueTimeoutMs: MAX_PAUSE_MS,
      starvationMs: AGEING_MS,
      preempt: false,
    },
  });

/** Seed 001: `AgeWeight = 1e-6` per µs tick, i.e. +1.0 score per second waited. */
export const SLO_AGE_WEIGHT_PER_MS = 1e-3;

export type PriorityConfigResult =
  | { ok: true; config: ResolvedPriorityConfig }
  | { ok: false; errors: string[] };

function checkNumber(
  errors: string[],
  field: string,
  value: unknown,
  ok: (n: number) => boolean,
  want: string,
): void {
  if (typeof value !== "number" || !Number.isFinite(value) || !ok(value)) {
    errors.push(`${field}: must be ${want}, got ${String(value)}`);
  }
}

/** tr's bounds on waiting in force (`--tail` and its halves). */
export interface WaitBounds {
  ageingMs: number;
  maxPauseMs: number;
}

/**
 * The classes that wait by tr's own bounds rather than a gateway's (DEFAULT_CLASS_SETTINGS
 * above): unless the section sets them, they starve at the ageing bound (at the max pause when
 * ageing is off: no promotion before the forced seat) and time out at the max pause, so that
 * `--tail` moves them with everything else.
 */
const FOLLOW_TAIL: ReadonlySet<PriorityClass> = new Set(["default", "bulk"]);

function classDefaults(name: PriorityClass, bounds: WaitBounds | undefined) {
  const d = DEFAULT_CLASS_SETTINGS[name];
  if (bounds === undefined || !FOLLOW_TAIL.has(name)) return d;
  const { ageingMs, maxPauseMs } = bounds;
  return {
    ...d,
    starvationMs: ageingMs > 0 ? Math.min(ageingMs, maxPauseMs) : maxPauseMs,
    queueTimeoutMs: maxPauseMs,
  };
}

function resolveClass(
  errors: string[],
  name: PriorityClass,
  input: Partial<PriorityClassSettings> | undefined,
  bounds: WaitBounds | undefined,
): PriorityClassSettings {
  const s = { ...classDefaults(name, bounds), ...(input ?? {}) };
  const at = `priority.classes.${name}`;
  checkNumber(errors, `${at}.reservedShare`, s.reservedShare, (n) => n >= 0 && n <= 1, "0..1");
  checkNumber(
    errors,
    `${at}.queueDepth`,
    s.queueDepth,
    (n) => Number.isInteger(n) && n >= 0,
    "an integer >= 0",
  );
  checkNumber(errors, `${at}.queueTimeoutMs`, s.queueTimeoutMs, (n) => n > 0, "a number > 0");
  checkNumber(errors, `${at}.starvationMs`, s.starvationMs, (n) => n >= 0, "a number >= 0");
  if (typeof s.preempt !== "boolean") errors.push(`${at}.preempt: must be true or false`);
  return s;
}

function oneOf(list: readonly string[], value: unknown): boolean {
  return typeof value === "string" && list.includes(value);
}

/**
 * Apply defaults and validate. Every error names its field. Reservations must fit: each share
 * in 0..1 and their sum at most 1 (all reservations together must fit under capacity).
 */
export function resolvePriorityConfig(
  input: PriorityConfig,
  bounds?: WaitBounds,
): PriorityConfigResult {
  const errors: string[] = [];
  if (input === null || typeof input !== "object") {
    return { ok: false, errors: ["priority: must be an object"] };
  }
  const given = input.classes ?? {};
  if (given === null || typeof given !== "object")
    errors.push("priority.classes: must be an object");
  else {
    for (const name of Object.keys(given)) {
      if (!isPriorityClass(name)) errors.push(`priority.classes.${name}: unknown class`);
    }
  }
  const classes = PRIORITY_CLASSES.map((name) =>
    resolveClass(
      errors,
      name,
      typeof given === "object" && given !== null ? given[name] : undefined,
      bounds,
    ),
  );
  let sum = 0;
  for (const c of classes) sum += Number.isFinite(c.reservedShare) ? c.reservedShare : 0;
  if (sum > 1 + 1e-9) errors.push(`priority.classes: reservedShare sums to ${sum}, more than 1`);
  const queuePolicy = input.queuePolicy ?? "ta";
  if (!oneOf([...QUEUE_POLICIES, ...TEST_ONLY_QUEUE_POLICIES], queuePolicy)) {
    errors.push(
      `priority.queuePolicy: must be one of ${QUEUE_POLICIES.join(", ")}, got ${String(queuePolicy)}`,
    );
  }
  const priorityPolicy = input.priorityPolicy ?? "constant";
  if (!oneOf([...PRIORITY_POLICIES, ...TEST_ONLY_PRIORITY_POLICIES], priorityPolicy)) {
    errors.push(
      `priority.priorityPolicy: must be one of ${PRIORITY_POLICIES.join(", ")}, got ${String(priorityPolicy)}`,
    );
  }
  const ageWeightPerMs = input.ageWeightPerMs ?? SLO_AGE_WEIGHT_PER_MS;
  checkNumber(errors, "priority.ageWeightPerMs", ageWeightPerMs, (n) => n >= 0, "a number >= 0");
  if (errors.length > 0 || classes.length !== CLASS_COUNT) return { ok: false, errors };
  return { ok: true, config: { classes, queuePolicy, priorityPolicy, ageWeightPerMs } };
}
