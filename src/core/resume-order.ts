import type { ProgramRecord, ResumeOrder } from "./records.ts";

/**
 * Which paused programs the resume step considers first, as a pure comparator over programs,
 * so that later queue policies (priority classes, tenants, fcfs, sjf...) swap in here. The
 * queue keeps its programs sorted by it (near-sorted between passes, so re-sorting is cheap).
 */

/**
 * Resume groups (ThunderAgent's resume order):
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
 * where a program's score is 1/context + 1 if a turn waits on it), then by queue entry so equal
 * programs keep first-come order. The default resume order: waits are bounded by the resume
 * pass's overdue rule (resume.ts case 1), not by this order.
 */
export const groupThenSmallest: ResumeOrder = (a, b) =>
  resumeGroupOf(a) - resumeGroupOf(b) || a.tokens - b.tokens || a.queueSeq - b.queueSeq;
