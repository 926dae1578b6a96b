import { Errors } from "../errors.ts";
import type { CoreScheduler, CreateSchedulerOptions } from "./api.ts";
import { auditBooks } from "./audit.ts";
import { anyHealthy, applySample, recordFailure } from "./backend-health.ts";
import { forgetExpiredEnds } from "./ended-ids.ts";
import { DEFAULT_ENGINE_ORDER, ENGINE_ORDERS } from "./engine-order.ts";
import type { SchedulerEvent } from "./events.ts";
import { holdOf, holds } from "./hold-position.ts";
import { lendIdleRoom } from "./lending.ts";
import { expireLikelyDone } from "./likely-done.ts";
import { pausePriceFor, refreshPausedFrom } from "./pause-price.ts";
import { pauseOverCapacity } from "./pause-step.ts";
import { smallestFirstVictims } from "./pause-victims.ts";
import { placementFn } from "./placement.ts";
import { setupPriorities } from "./priority/priority-setup.ts";
import { rejectQueueTimeouts } from "./priority/priority-timeouts.ts";
import { releaseProgram } from "./release.ts";
import { onRequestArrived } from "./request-arrival.ts";
import {
  onFirstToken,
  onProgress,
  onRequestFinished,
  onUsage,
  tryCommitFirstByte,
} from "./request-lifecycle.ts";
import { tryResume } from "./resume.ts";
import { groupThenSmallest } from "./resume-order.ts";
import {
  assertBackends,
  assertSchedulerConfig,
  resolveSchedulerConfig,
} from "./scheduler-config.ts";
import { createSchedulerState, type SchedulerState } from "./scheduler-state.ts";
import { programView, snapshot } from "./snapshot.ts";
import {
  expireIdle,
  nextDeadline,
  rejectOverdue,
  rejectParked,
  rejectStranded,
} from "./timeouts.ts";

export { DEFAULT_SCHEDULER_CONFIG } from "./scheduler-config.ts";

/**
 * The router's scheduler core (ThunderAgent's `tr` scheduler, and the `default`
 * plain proxy). Pure and synchronous: the run loop calls `handle()` one event at a time; time
 * comes inside events; every decision leaves through `Effects`.
 */

/** What a drain with nothing to hand over returns: read only, never written, shared. */
const NOTHING: never[] = Object.freeze([]) as never[];
export function createScheduler(options: CreateSchedulerOptions): CoreScheduler {
  assertSchedulerConfig(options.config);
  assertBackends(options.backends);
  const config = resolveSchedulerConfig(options.config);
  const state = createSchedulerState(config, options.backends, options.effects, {
    resumeOrder: options.policies?.resumeOrder ?? groupThenSmallest,
    place: options.policies?.place ?? placementFn(options.config.placement),
    pauseVictims: options.policies?.pauseVictims ?? smallestFirstVictims,
    pausePrice: options.policies?.pausePrice ?? pausePriceFor(options.config.tierPacking),
    engineOrder:
      options.policies?.engineOrder ??
      ENGINE_ORDERS[options.config.engineOrder ?? DEFAULT_ENGINE_ORDER],
  });
  setupPriorities(state, options.config, options.policies);
  return {
    prioritiesEnabled: state.priority !== null,
    tryCommitFirstByte: (requestId) => tryCommitFirstByte(state, requestId),
    drainQueueWaitObservations() {
      const pr = state.priority;
      // Asked after every event: nothing to hand over allocates nothing.
      if (pr === null || pr.waitObservations.length === 0) return NOTHING;
      const list = pr.waitObservations;
      pr.waitObservations = [];
      return list;
    },
    handle(event: SchedulerEvent): void {
      // Time only moves forward, even if a runtime hands in an older timestamp.
      if (Number.isFinite(event.now) && event.now > state.now) state.now = event.now;
      handleEvent(state, event);
    },
    program(id) {
      const p = state.programs.get(id);
      return p === undefined ? undefined : programView(state, p);
    },
    snapshot: () => snapshot(state),
    backendHealthy: (id) => state.backendById.get(id)?.healthy === true,
    holdOf: (key) => holdOf(state, key),
    holds: () => holds(state),
    audit: () => auditBooks(state),
    nextDeadline: () => nextDeadline(state),
    drainPauseObservations() {
      if (state.pauseObservations.length === 0) return NOTHING;
      const list = state.pauseObservations;
      state.pauseObservations = [];
      return list;
    },
  };
}

function handleEvent(state: SchedulerState, event: SchedulerEvent): void {
  switch (event.kind) {
    case "request_arrived":
      onRequestArrived(state, event);
      break;
    case "request_first_token":
      onFirstToken(state, event.requestId);
      break;
    case "request_progress":
      onProgress(state, event.requestId, event.completionTokens);
      break;
    case "request_usage":
      onUsage(state, event.requestId, event.usage);
      break;
    case "request_finished":
      onRequestFinished(state, event);
      break;
    case "program_release": {
      const p = state.programs.get(event.programId);
      if (p === undefined) break;
      releaseProgram(state, p, "release");
      tryResumeIfTr(state);
      break;
    }
    case "tick":
      onTick(state, event.metrics);
      break;
    case "backend_failure": {
      const b = state.backendById.get(event.backendId);
      if (b !== undefined) recordFailure(state, b, "forward", event.down === true);
      break;
    }
    case "shutdown":
      state.shuttingDown = true;
      for (const r of state.parkedOrder.values()) rejectParked(state, r, Errors.shuttingDown());
      break;
    default: {
      const never: never = event;
      state.effects.log("warn", "unknown scheduler event ignored", { event: never });
    }
  }
}

function tryResumeIfTr(state: SchedulerState): void {
  if (state.config.mode === "tr") tryResume(state);
}

/**
 * The tick, in order:
 *   1. engine truth: metrics, capacity, shared credit and health per polled backend;
 *   2. idle lease, and the grace of likely-done programs (likely-done.ts); ended ids past
 *      their hour are forgotten (ended-ids.ts);
 *   3. `maxWaitMs` rejections;
 *   4. price a pause on each backend (tr; pause-price.ts), then lend the room of programs in
 *      a long tool call (tr; lending.ts);
 *   5. resume (tr; overdue heads first, then the queue, then idle backends: resume.ts);
 *   6. (priorities on) per-class queue timeouts (408), after the resume: a class whose queue
 *      timeout is the max pause has its forced seat and its timeout fall due in the same tick,
 *      and a request that can still be seated is seated rather than refused;
 *   7. pause where over capacity (tr). Resume runs first so a program paused in this tick
 *      cannot come straight back in it.
 */
function onTick(
  state: SchedulerState,
  metrics: Extract<SchedulerEvent, { kind: "tick" }>["metrics"],
): void {
  for (const id in metrics) {
    const b = state.backendById.get(id);
    if (b === undefined) continue;
    const sample = metrics[id];
    if (sample === null || typeof sample !== "object") recordFailure(state, b, "poll");
    else applySample(state, b, sample);
  }
  expireIdle(state);
  expireLikelyDone(state);
  forgetExpiredEnds(state);
  rejectStranded(state);
  rejectOverdue(state);
  if (state.config.mode !== "tr") {
    rejectQueueTimeouts(state);
    return;
  }
  refreshPausedFrom(state);
  lendIdleRoom(state);
  if (anyHealthy(state)) tryResume(state);
  rejectQueueTimeouts(state);
  pauseOverCapacity(state);
}
