/**
 * One cap on the request bytes held in memory across every request at once. Each body is
 * limited by `--max-body-size`, but twenty slow clients each sending 32 MiB would still hold
 * 640 MiB; past this cap a new body is refused with 503 and Retry-After before it is read, and a
 * body that grows past it mid-read is cut off the same way.
 */
import { getHeapStatistics } from "node:v8";

export interface BodyBudget {
  /** Reserve `bytes`; false = over the cap, nothing reserved. */
  take(bytes: number): boolean;
  /** Hand back what `take` reserved. */
  give(bytes: number): void;
  readonly used: number;
  readonly limit: number;
}

/** A quarter of the heap this process may grow to: the rest is the router's own. */
export function defaultBodyBudgetBytes(): number {
  return Math.floor(getHeapStatistics().heap_size_limit / 4);
}

export function createBodyBudget(limit: number): BodyBudget {
  let used = 0;
  return {
    take(bytes) {
      if (used + bytes > limit) return false;
      used += bytes;
      return true;
    },
    give(bytes) {
      used = Math.max(0, used - bytes);
    },
    get used() {
      return used;
    },
    limit,
  };
}
