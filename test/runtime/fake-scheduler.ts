import type { Scheduler, SchedulerSnapshot } from "../../src/core/api.ts";
import type { Effects } from "../../src/core/effects.ts";
import type { SchedulerEvent } from "../../src/core/events.ts";

/** A scheduler stand-in: records events and lets each test decide what effects to call. */
export interface FakeScheduler extends Scheduler {
  events: SchedulerEvent[];
}

export function createFakeScheduler(
  effects: Effects,
  react: (event: SchedulerEvent, effects: Effects) => void = () => {},
): FakeScheduler {
  const events: SchedulerEvent[] = [];
  const snapshot: SchedulerSnapshot = {
    mode: "tr",
    now: 0,
    budgetsExhausted: { steps: 0, tokens: 0, wall: 0 },
    programs: [],
    anonymousPrograms: [],
    backends: [],
    counters: {
      pauses: 0,
      marks: 0,
      resumes: 0,
      forcedResumes: 0,
      releases: 0,
      idleReleases: 0,
      migrations: 0,
      likelyDoneMarks: 0,
      likelyDoneContinued: 0,
      likelyDoneReleases: 0,
      likelyDoneReturns: 0,
    },
    queueLength: 0,
    pausedPrograms: 0,
    endedPrograms: 0,
  };
  return {
    events,
    handle(event) {
      events.push(event);
      react(event, effects);
    },
    program: () => undefined,
    snapshot: () => snapshot,
    backendHealthy: () => true,
    nextDeadline: () => null,
    drainPauseObservations: () => [],
    holdOf: () => null,
    holds: () => [],
  };
}
