import { engineOrderFor } from "./engine-order.ts";
import { refreshHeadroom } from "./headroom.ts";
import { addAnonymous, attach, detach, refreshFootprint, setStatus } from "./ledger.ts";
import { pausePriceOf } from "./pause-price.ts";
import { type ClassIndex, PRIORITY_CLASSES } from "./priority/priority-classes.ts";
import type { PriorityState } from "./priority/priority-state.ts";
import { dequeue, enqueue, unpark } from "./queue.ts";
import type { BackendBook, ProgramRecord, RequestRecord } from "./records.ts";
import { MAX_PAUSE_OBSERVATIONS } from "./scheduler-config.ts";
import type { SchedulerState } from "./scheduler-state.ts";
import { addPending } from "./truth.ts";

/** The state transitions that move programs and requests between the queue and backends. */

function observePause(state: SchedulerState, ms: number): void {
  const list = state.pauseObservations;
  if (list.length >= MAX_PAUSE_OBSERVATIONS) list.shift();
  list.push(ms);
}

/** Queue wait by class (for the per-class metrics), bounded like the pause observations. */
function observeQueueWait(pr: PriorityState, cls: ClassIndex, ms: number): void {
  const list = pr.waitObservations;
  if (list.length >= MAX_PAUSE_OBSERVATIONS) list.shift();
  list.push({ priorityClass: PRIORITY_CLASSES[cls], ms });
}

/**
 * Hand a request to a backend. A program's request makes the program REASONING;
 * an anonymous one counts in the backend's load until it ends. Parked time becomes
 * `x-maitred-paused-ms` and one pause-duration observation.
 */
export function dispatchRequest(state: SchedulerState, r: RequestRecord, b: BackendBook): void {
  r.backend = b;
  b.inFlight.add(r);
  addPending(b, r);
  const p = r.program;
  if (p === null) {
    addAnonymous(b, r, 1);
  } else {
    p.inFlight.push(r);
    // A pin lasts while a request of the program waits for its backend (pinned-backend.ts).
    if (p.parked.length === 0) p.pinnedBackend = null;
    setStatus(p, "REASONING", state.now);
    refreshFootprint(p);
    // The engine is given the step: it counts against the steps budget (budget.ts).
    if (r.countsStep) {
      r.countsStep = false;
      p.budgetSteps++;
    }
  }
  let pausedMs = 0;
  if (r.parkedAt !== null) {
    pausedMs = state.now - r.parkedAt;
    observePause(state, pausedMs);
    if (state.priority !== null) observeQueueWait(state.priority, r.cls, pausedMs);
  }
  state.effects.dispatch(r.id, b.id, pausedMs, engineOrderFor(state, r, b));
}

/** Pause an ACTIVE program: unregister it and queue it with its origin recorded. */
export function pauseProgram(state: SchedulerState, p: ProgramRecord, why: string): void {
  // Where a pause costs a re-prefill, its context is the engine's to evict: not counted on.
  if (p.backend !== null && pausePriceOf(state, p.backend).name === "prefill") p.servedOn = null;
  const b = detach(p);
  p.originBackend = b === null ? p.originBackend : b.id;
  p.pausedSince = state.now;
  p.pausedInPass = state.resumePass;
  enqueue(state, p);
  state.counters.pauses++;
  state.effects.log("debug", "program paused", {
    programId: p.id,
    backend: b?.id ?? null,
    tokens: p.tokens,
    why,
  });
}

/**
 * Move a queued program onto `b` and dispatch every request it has parked. Counts a
 * migration when it lands elsewhere than the backend it was paused from.
 */
export function resumeProgram(
  state: SchedulerState,
  p: ProgramRecord,
  b: BackendBook,
  forced: boolean,
): void {
  dequeue(state, p);
  if (p.pausedSince !== null) {
    p.pausedMsTotal += state.now - p.pausedSince;
    p.pausedSince = null;
  }
  const migrated = p.originBackend !== null && p.originBackend !== b.id;
  if (migrated) state.counters.migrations++;
  state.counters.resumes++;
  if (forced) state.counters.forcedResumes++;
  p.admitSeq = ++state.admitSeq;
  refreshHeadroom(state, p);
  attach(p, b);
  p.originBackend = null;
  state.effects.log(
    forced ? "info" : "debug",
    forced ? "program force-resumed" : "program resumed",
    {
      programId: p.id,
      backend: b.id,
      tokens: p.tokens,
      migrated,
    },
  );
  for (const r of p.parked.slice()) {
    unpark(state, r);
    dispatchRequest(state, r, b);
  }
}

/**
 * Leave a backend so the next request can be placed elsewhere: an unhealthy one, or one that
 * does not hold the state the request continues (pinned-backend.ts).
 */
export function detachForReplacement(
  state: SchedulerState,
  p: ProgramRecord,
  why = "its backend is unhealthy",
): void {
  const b = detach(p);
  if (b !== null) p.originBackend = b.id;
  state.effects.log("info", "program leaves its backend", {
    programId: p.id,
    backend: b?.id ?? null,
    why,
  });
}
