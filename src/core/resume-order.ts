import type { ProgramRecord, ResumeOrder } from "./records.ts";

/**
 * Which paused programs the resume step considers first, as a pure comparator over programs,
 * so that later queue policies (priority classes, tenants, fcfs, sjf...) swap in here. The
 * queue keeps its programs sorted by it (near-sorted between passes, so re-sorting is cheap).
 */

/**
 * Resume groups (seed 004 "Resume Logic"; reference §3.6 step 2):
 *   0. a request is waiting and the program ran before (a turn is blocked on us),
 *   1. new programs (never placed; their first request waits),
 *   2. paused between turns with nothing waiting (resuming them only saves a later wait).
 */
export type ResumeGroup = 0 | 1 | 2;

export function resumeGroupOf(p: ProgramRecord): ResumeGroup {
  if (p.parked.length === 0) return 2;
  return p.placedOnce ? 0 : 1;
}

/**
 * The original's order: by group, smallest first within a group (S_restore = 1/c + 1[τ=R],
 * reference §1.3), then by queue entry so equal programs keep first-come order.
 */
export const groupThenSmallest: ResumeOrder = (a, b) =>
  resumeGroupOf(a) - resumeGroupOf(b) || a.tokens - b.tokens || a.queueSeq - b.queueSeq;

/** When the program's oldest parked request was parked (parked in time order). */
function oldestParkedAt(p: ProgramRecord): number {
  return p.parked.length === 0 ? Number.POSITIVE_INFINITY : (p.parked[0].parkedAt as number);
}

/**
 * The default: the original's order with ageing. Within a group, aged programs (a parked
 * request waited `ageingMs`; `aged` is set by each resume pass) come first, oldest first; the
 * rest smallest first. Smallest-first alone lets small programs overtake a large one forever
 * (on the DeepSeek trace ~10% of paused steps waited over 20 min and ~70 an hour hit the
 * 1800 s forced resume: src/core/README.md "Evidence").
 */
export const groupAgedThenSmallest: ResumeOrder = (a, b) =>
  resumeGroupOf(a) - resumeGroupOf(b) ||
  Number(b.aged) - Number(a.aged) ||
  (a.aged ? oldestParkedAt(a) - oldestParkedAt(b) : 0) ||
  a.tokens - b.tokens ||
  a.queueSeq - b.queueSeq;
