import { lowerBudget } from "./budget-rules.ts";
import { estimateContextTokens } from "./context-estimate.ts";
import { takeEnded } from "./ended-ids.ts";
import type { SchedulerEvent } from "./events.ts";
import { headroomOf, refreshHeadroom } from "./headroom.ts";
import { attach } from "./ledger.ts";
import { observeToolTime } from "./lending.ts";
import { continueIfLikelyDone, countReturn } from "./likely-done.ts";
import { DEFAULT_CLASS_INDEX } from "./priority/priority-classes.ts";
import { dispatchRequest } from "./program-moves.ts";
import { touch } from "./queue.ts";
import type { BackendBook, ProgramRecord, RequestRecord } from "./records.ts";
import { createProgramRecord, type SchedulerState } from "./scheduler-state.ts";
import { joinTree } from "./tree.ts";

/** Steps shared by the arrival cases (request-arrival.ts) and their priority variant. */

export type Arrival = Extract<SchedulerEvent, { kind: "request_arrived" }>;

/**
 * The arriving request's program: created on its first request. A request without a program
 * id gets a program of one step of its own (`anonymous`): not in the program map (no id names
 * it), released when its request ends, and admitted like every other program.
 */
export function programFor(state: SchedulerState, ev: Arrival): ProgramRecord {
  const programId = ev.programId;
  let p = programId === null ? undefined : state.programs.get(programId);
  if (p === undefined) {
    const anonymous = programId === null;
    const id = anonymous ? `anonymous request ${ev.requestId}` : programId;
    p = createProgramRecord(
      id,
      ++state.programSeq,
      // A request of no program has no program to place in a tree.
      anonymous ? null : (ev.parentProgramId ?? null),
      state.now,
      anonymous,
    );
    p.headroom = headroomOf(state, p);
    if (!anonymous) {
      p.budget = lowerBudget(null, ev.budget);
      // An id the router ended a while ago goes on under its old budget (ended-ids.ts).
      if (takeEnded(state, p)?.why === "likely_done") countReturn(state, p);
      state.programs.set(id, p);
      joinTree(state, p);
    }
  }
  return p;
}

/**
 * A program starts a step: the time since its last one ended was a tool call. A retried request
 * (its backend failed) is the same step: only its activity is noted.
 */
export function beginStep(state: SchedulerState, p: ProgramRecord, ev: Arrival): void {
  continueIfLikelyDone(state, p, ev.retry === true);
  if (ev.retry !== true) {
    observeToolTime(state, p);
    p.steps++;
  }
  touch(state, p);
}

export function newRequest(
  state: SchedulerState,
  ev: Arrival,
  p: ProgramRecord | null,
  chars: number[],
  cls = DEFAULT_CLASS_INDEX,
): RequestRecord {
  const baseTokens = estimateContextTokens(p, chars, state.estimator);
  let promptChars = 0;
  for (const c of chars) promptChars += c;
  const maxWait = ev.maxWaitMs;
  const r: RequestRecord = {
    id: ev.requestId,
    program: p,
    backend: null,
    parkedAt: null,
    arrivedAt: state.now,
    maxWaitMs: maxWait !== undefined && Number.isFinite(maxWait) && maxWait >= 0 ? maxWait : null,
    // An anonymous request's program ends with it.
    final: ev.final === true || ev.programId === null,
    promptChars,
    messageCount: chars.length,
    baseTokens,
    tokens: baseTokens,
    progressApplied: 0,
    usageSeen: false,
    cancelled: false,
    cls,
    firstByte: false,
    prefilled: false,
    countsStep: ev.retry !== true,
    pinnedBackend: ev.pinnedBackend ?? null,
  };
  state.requests.set(r.id, r);
  return r;
}

/** Attach a program placed without the queue; a program leaving a backend counts a migration. */
export function placeDirect(
  state: SchedulerState,
  p: ProgramRecord,
  r: RequestRecord,
  b: BackendBook,
): void {
  if (p.originBackend !== null && p.originBackend !== b.id) state.counters.migrations++;
  p.originBackend = null;
  p.admitSeq = ++state.admitSeq;
  refreshHeadroom(state, p);
  attach(p, b);
  dispatchRequest(state, r, b);
}
