import { deadlineOf } from "../deadline.ts";
import type { ClassBook, RequestRecord } from "../records.ts";
import { CLASS_COUNT, type ClassIndex } from "./priority-classes.ts";
import type { ResolvedPriorityConfig } from "./priority-config.ts";
import type { AdmissionOutcome, QueueWaitObservation } from "./priority-views.ts";

/**
 * Mutable priority state, present on `SchedulerState.priority` only when priorities are on
 * (off = null, and every hook in the core is one null check).
 */

export interface ClassCounters {
  admissions: Record<AdmissionOutcome, number>;
  /** Requests of this (effective) class whose requested class was lowered by the tenant clamp. */
  clamps: number;
  /** Programs of this class admitted by starvation promotion. */
  promotions: number;
  /** Programs of this class taken as preemption victims (paused or request cancelled). */
  preemptions: number;
}

export interface PriorityState {
  readonly config: ResolvedPriorityConfig;
  /** Parked requests per class (by the request's class), in parking order: heads first. */
  readonly parked: Map<string, RequestRecord>[];
  readonly counters: ClassCounters[];
  waitObservations: QueueWaitObservation[];
}

function zeroCounters(): ClassCounters {
  return {
    admissions: {
      admitted: 0,
      queued: 0,
      queue_full: 0,
      queue_timeout: 0,
      client_closed: 0,
      preempted: 0,
    },
    clamps: 0,
    promotions: 0,
    preemptions: 0,
  };
}

export function createPriorityState(config: ResolvedPriorityConfig): PriorityState {
  const parked: Map<string, RequestRecord>[] = [];
  const counters: ClassCounters[] = [];
  for (let c = 0; c < CLASS_COUNT; c++) {
    parked.push(new Map());
    counters.push(zeroCounters());
  }
  return { config, parked, counters, waitObservations: [] };
}

export function createClassBooks(): ClassBook[] {
  const books: ClassBook[] = [];
  for (let c = 0; c < CLASS_COUNT; c++) {
    books.push({ reasoningTokens: 0, actingTokens: 0, programs: 0, headroomTokens: 0 });
  }
  return books;
}

export function countAdmission(
  state: { priority: PriorityState | null },
  cls: ClassIndex,
  outcome: AdmissionOutcome,
): void {
  if (state.priority !== null) state.priority.counters[cls].admissions[outcome]++;
}

/**
 * Whether the head of class `cls`'s queue has waited past its starvation threshold, by the
 * core's one deadline rule (timeouts.ts `deadlineOf`), as `priorityDeadline` reports it.
 */
export function isStarved(
  pr: PriorityState,
  cls: ClassIndex,
  head: RequestRecord,
  now: number,
): boolean {
  return deadlineOf(head.parkedAt as number, pr.config.classes[cls].starvationMs) <= now;
}

/** The oldest parked request of a class, or undefined. */
export function queueHead(pr: PriorityState, cls: ClassIndex): RequestRecord | undefined {
  for (const r of pr.parked[cls].values()) return r;
  return undefined;
}

/** A program of class `cls` seated because its queue head waited past its bound. */
export function countPromotion(state: { priority: PriorityState | null }, cls: ClassIndex): void {
  if (state.priority !== null) state.priority.counters[cls].promotions++;
}
