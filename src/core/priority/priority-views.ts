import type { PriorityClass } from "./priority-classes.ts";
import type { PriorityClassSettings, PriorityPolicy, QueuePolicy } from "./priority-config.ts";

/**
 * Read-only priority views for the admin routes and the metrics adapter (label `class`), and
 * the admission outcomes they count: shapes only, so the core's public surface (api.ts) can
 * name them without importing the state they are read from.
 */

/** Outcome of a request's admission, per class (the metrics' `outcome` label; status codes in src/proxy/README.md). */
export const ADMISSION_OUTCOMES = [
  "admitted", // dispatched on arrival
  "queued", // parked on arrival
  "queue_full", // 429 on arrival
  "queue_timeout", // 408 after waiting
  "client_closed", // 499: the client left while parked
  "preempted", // 503: cancelled before its first byte for a higher class
] as const;
export type AdmissionOutcome = (typeof ADMISSION_OUTCOMES)[number];

export interface QueueWaitObservation {
  priorityClass: PriorityClass;
  ms: number;
}

export interface ClassView {
  settings: PriorityClassSettings;
  /** Requests of this class parked now. */
  queued: number;
  /** Monotonic: requests by admission outcome. */
  admissions: Record<AdmissionOutcome, number>;
  clamps: number;
  promotions: number;
  preemptions: number;
}

export interface ClassRoomView {
  /** `reservedShare × capacity` (0 while the capacity is unknown). */
  reservedTokens: number;
  /** Tokens the class's programs use on the backend (reasoning + w·acting + buffer each). */
  usedTokens: number;
  /** Reserved room the class leaves unused: held back from every lower class. */
  heldTokens: number;
}

export interface PrioritySnapshot {
  queuePolicy: QueuePolicy;
  priorityPolicy: PriorityPolicy;
  classes: Record<PriorityClass, ClassView>;
  backends: { id: string; classes: Record<PriorityClass, ClassRoomView> }[];
}
