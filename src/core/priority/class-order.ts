import type { ProgramRecord, ResumeOrder } from "../records.ts";
import { groupThenSmallest } from "../resume-order.ts";
import type { PriorityPolicy, QueuePolicy } from "./priority-config.ts";

/**
 * Queue order with priorities on: strict class order, highest first, then the within-class
 * `queuePolicy`, then the program id, so the order is total and deterministic.
 *
 * A program's "arrival" is the parking time of its oldest waiting request. Programs with nothing
 * waiting (paused between turns) come after every waiting one in each policy: resuming them only
 * saves a later wait (the `ta` groups make the same call).
 */

export interface ClassOrderOptions {
  queuePolicy: QueuePolicy;
  priorityPolicy: PriorityPolicy;
  ageWeightPerMs: number;
  /** The event clock (scores age with it). */
  now: () => number;
}

const cmp = (x: number, y: number) => (x < y ? -1 : x > y ? 1 : 0);
const byId: ResumeOrder = (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function waiting(p: ProgramRecord): boolean {
  return p.parked.length > 0;
}

function arrival(p: ProgramRecord): number {
  return waiting(p) ? (p.parked[0].parkedAt as number) : (p.pausedSince ?? 0);
}

/** Waiting programs first, then by arrival. */
const byArrival: ResumeOrder = (a, b) =>
  Number(waiting(b)) - Number(waiting(a)) || cmp(arrival(a), arrival(b));

/**
 * Seed 001 "Priority Policies": a score per program, higher = sooner. `constant` scores every
 * program alike; `slo-based` adds `ageWeight × time waited`; `inverted-slo` (tests only)
 * subtracts it.
 */
export function priorityScore(
  p: ProgramRecord,
  policy: PriorityPolicy,
  ageWeightPerMs: number,
  now: number,
): number {
  if (policy === "constant" || !waiting(p)) return 0;
  const aged = ageWeightPerMs * (now - arrival(p));
  return policy === "slo-based" ? aged : -aged;
}

/** The within-class order of one policy (no class term). */
export function withinClassOrder(options: ClassOrderOptions): ResumeOrder {
  const { priorityPolicy, ageWeightPerMs, now } = options;
  const score = (p: ProgramRecord) => priorityScore(p, priorityPolicy, ageWeightPerMs, now());
  switch (options.queuePolicy) {
    case "ta":
      return (a, b) => groupThenSmallest(a, b) || byId(a, b);
    case "fcfs":
      return (a, b) => byArrival(a, b) || byId(a, b);
    case "priority-fcfs":
      // Descending score; equal scores (always, with `constant`) fall back to FCFS.
      return (a, b) => cmp(score(b), score(a)) || byArrival(a, b) || byId(a, b);
    case "sjf":
      // Smallest need first; the score is ignored, whatever the priority policy.
      return (a, b) =>
        Number(waiting(b)) - Number(waiting(a)) ||
        a.tokens - b.tokens ||
        byArrival(a, b) ||
        byId(a, b);
    case "reverse-priority":
      return (a, b) => cmp(score(a), score(b)) || byArrival(a, b) || byId(a, b);
    default: {
      const never: never = options.queuePolicy;
      throw new Error(`unknown queue policy ${String(never)}`);
    }
  }
}

/** Class first (system before bulk), then the within-class policy. */
export function createClassOrder(options: ClassOrderOptions): ResumeOrder {
  const within = withinClassOrder(options);
  return (a, b) => a.cls - b.cls || within(a, b);
}
