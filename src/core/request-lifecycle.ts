import { recordForwardSuccess } from "./backend-health.ts";
import { chargeTokens } from "./budget.ts";
import { messagesCoveredByUsage } from "./context-estimate.ts";
import type { SchedulerEvent, Usage } from "./events.ts";
import { observeStepEnd } from "./headroom.ts";
import { addAnonymous, refreshCredit, setStatus } from "./ledger.ts";
import { markLikelyDone } from "./likely-done.ts";
import { countAdmission } from "./priority/priority-state.ts";
import { pauseProgram } from "./program-moves.ts";
import { refreshProgram, touch, unpark } from "./queue.ts";
import type { RequestRecord } from "./records.ts";
import { endIfAnonymousAndDone, releaseProgram } from "./release.ts";
import { tryResume } from "./resume.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/** Token books of a running request: streaming progress, then engine usage. */

function setRequestTokens(state: SchedulerState, r: RequestRecord, tokens: number): void {
  if (r.program !== null) {
    r.tokens = tokens;
    refreshProgram(state, r.program);
  } else if (r.backend !== null) {
    addAnonymous(r.backend, r, -1);
    r.tokens = tokens;
    addAnonymous(r.backend, r, 1);
  } else {
    r.tokens = tokens;
  }
}

function dispatched(state: SchedulerState, requestId: string): RequestRecord | undefined {
  const r = state.requests.get(requestId);
  return r !== undefined && r.backend !== null ? r : undefined;
}

export function onFirstToken(state: SchedulerState, requestId: string): void {
  const r = dispatched(state, requestId);
  if (r === undefined) return;
  r.firstByte = true; // never a preemption victim from now on
  r.prefilled = true; // its prompt is in the engine's KV cache: it may enter the shared credit
  if (r.program !== null) refreshCredit(r.program);
  recordForwardSuccess(r.backend!);
}

/**
 * The atomic "first byte sent" vs "chosen as victim" decision (one compare-and-swap,
 * whichever happens first wins). The adapter calls this synchronously before
 * it writes a request's first byte to the client: true = commit (the request can no longer be
 * preempted), false = the request was already cancelled (preempted, or its backend went
 * unhealthy) or is unknown, so the byte must not be written; the cancel effect answers it.
 */
export function tryCommitFirstByte(state: SchedulerState, requestId: string): boolean {
  const r = state.requests.get(requestId);
  if (r === undefined || r.cancelled || r.backend === null) return false;
  r.firstByte = true;
  return true;
}

/**
 * Streaming growth, applied every `progressIntervalTokens` completion tokens (ThunderAgent
 * adds 20 per 20 SSE events, counting events, not tokens). Once usage is
 * known it is the truth and progress is ignored.
 */
export function onProgress(state: SchedulerState, requestId: string, completion: number): void {
  const r = dispatched(state, requestId);
  if (r === undefined || r.usageSeen || !Number.isFinite(completion)) return;
  if (completion - r.progressApplied < state.config.progressIntervalTokens) return;
  r.progressApplied = completion;
  setRequestTokens(state, r, r.baseTokens + completion);
}

/** Engine truth: the request's tokens become `usage.total_tokens`; the ratio learns. */
export function onUsage(state: SchedulerState, requestId: string, usage: Usage): void {
  const r = dispatched(state, requestId);
  if (r === undefined) return;
  const total = usage.totalTokens;
  if (!Number.isFinite(total) || total < 0) return;
  state.estimator.learn(r.promptChars, usage.promptTokens);
  r.usageSeen = true;
  recordForwardSuccess(r.backend!);
  const p = r.program;
  if (p !== null) {
    p.knownTokens = total;
    p.countedMessages = messagesCoveredByUsage(r.messageCount);
  }
  setRequestTokens(state, r, total);
}

type Finished = Extract<SchedulerEvent, { kind: "request_finished" }>;

/**
 * The one end of every request, whatever the outcome (ThunderAgent leaves a program
 * REASONING forever on errors and disconnects). Cases:
 *   1. unknown (already rejected, or never seen) → nothing;
 *   2. still parked (client gone while waiting) → removed from the queue (a 499 in its class's
 *      counters); a preempted request, already detached from its program and backend, ends
 *      here too;
 *   3. anonymous → leaves its backend's load;
 *   4. a program's request → it leaves the program; when none is left in flight the step ends:
 *      REASONING → ACTING with the last known tokens (usage if it came, else the estimate), and
 *      with usage the step's growth is learned (headroom.ts);
 *      then a `final` request releases the program; an answer with no tool call marks it
 *      likely done (likely-done.ts); a program marked for pause is paused.
 * Capacity may have freed, so a resume is tried at once.
 */
export function onRequestFinished(state: SchedulerState, ev: Finished): void {
  const r = state.requests.get(ev.requestId);
  if (r === undefined) return; // 1
  state.requests.delete(r.id);
  const p = r.program;
  if (r.backend === null) {
    // 2 (the program's need shrinks with it). Preempted requests also end here, detached.
    if (ev.outcome === "client_closed" && !r.cancelled)
      countAdmission(state, r.cls, "client_closed");
    unpark(state, r);
    endIfAnonymousAndDone(state, p);
    return;
  }
  r.backend.inFlight.delete(r);
  if (p === null) {
    addAnonymous(r.backend, r, -1); // 3
    tryResume(state);
    return;
  }
  const i = p.inFlight.indexOf(r); // 4
  if (i >= 0) p.inFlight.splice(i, 1);
  chargeTokens(p, r);
  p.knownTokens = r.tokens;
  // Only an answered step leaves its context on the backend (the `uncached` engine order).
  p.servedOn = ev.outcome === "ok" ? r.backend.id : null;
  refreshProgram(state, p);
  const goesOn = ev.retrying === true; // the step is tried again at once
  if (p.inFlight.length === 0) {
    setStatus(p, "ACTING", state.now);
    // The step's growth: headroom.ts
    if (r.usageSeen && !goesOn) observeStepEnd(state, p, r.tokens);
  }
  touch(state, p);
  if (r.final && !goesOn) releaseProgram(state, p, "final");
  else if (p.inFlight.length === 0 && !goesOn) {
    // An answer with no tool call: likely done, its room lent at once (likely-done.ts).
    if (ev.answerStopped === true && ev.outcome === "ok") markLikelyDone(state, p);
    if (p.markedForPause) pauseProgram(state, p, "marked");
  }
  tryResume(state);
}
