/**
 * The waits a core observes while it handles an event (how long a parked request was held, how
 * long it queued in its class; a shadow core's holds and pauses) are kept in lists inside it:
 * the core is pure and has no histogram to put them in. The run loop's hook made here takes
 * them out after every event and hands each on at once, so each wait is observed when it
 * happens and a /metrics scrape never takes anything out: every scraper (two Prometheus
 * servers, a person's curl, a host program reading the registry itself) sees the same counts,
 * and a router nobody scrapes keeps no list growing.
 */
import type { RunLoopHooks } from "./run-loop.ts";

/** Moves one list of observations from where it is kept to where it is counted. */
export type ObservationTap = () => void;

export function tap<T>(drain: () => readonly T[], observe: (item: T) => void): ObservationTap {
  return () => {
    for (const item of drain()) observe(item);
  };
}

/**
 * A hook that runs every tap after each event. Placed after the hooks whose cores record
 * observations (a shadow's) and before any caller's, so a caller that hears of an event finds
 * its waits counted already.
 */
export function observationHooks(taps: readonly ObservationTap[]): RunLoopHooks {
  return {
    onEvent() {
      for (const t of taps) t();
    },
  };
}
