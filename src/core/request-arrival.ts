import { Errors, type MaitredError } from "../errors.ts";
import { anyHealthy } from "./backend-health.ts";
import { cleanChars, estimateContextTokens } from "./context-estimate.ts";
import type { SchedulerEvent } from "./events.ts";
import { activeTokens, attach, footprintOf, isPlaceable, roomTokens } from "./ledger.ts";
import { argMin } from "./placement.ts";
import { detachForReplacement, dispatchRequest } from "./program-moves.ts";
import { enqueue, park, refreshProgram, touch } from "./queue.ts";
import { fewestTokensBackend, tryResume } from "./resume.ts";
import {
  type BackendBook,
  createProgramRecord,
  type ProgramRecord,
  type RequestRecord,
  type SchedulerState,
} from "./scheduler-state.ts";

type Arrival = Extract<SchedulerEvent, { kind: "request_arrived" }>;

/**
 * A request arrives. Cases (both modes unless noted):
 *   0. shutting down → reject shutting_down;
 *   1. a request id already known → reject bad_request (the runtime's ids must be unique);
 *   2. no healthy backend → reject no_healthy_backend (never park forever);
 *   3. anonymous (programId null) → the healthy backend with the fewest tokens, at once; never
 *      paused, queued or merged into a shared program (reference §3.11.5);
 *   4. tr, program queued (paused, or new and not yet placed) → park; try a resume;
 *   5. program on an unhealthy backend → leave it, then place as in 7 (default: 8);
 *   6. program active on a healthy backend → dispatch there;
 *   7. tr, program new or leaving → placed at once on the placeable backend with the fewest
 *      active tokens that has room, unless programs with a waiting request are queued (they
 *      go first); otherwise queued and parked, and a resume is tried at once. Paused programs
 *      with nothing waiting never hold a new program back (reference §3.11.8);
 *   8. default, program new or leaving → the healthy backend with the fewest programs; it
 *      stays there (reference §3.8).
 */
export function onRequestArrived(state: SchedulerState, ev: Arrival): void {
  const error = admissionError(state, ev);
  if (error !== null) {
    state.effects.reject(ev.requestId, error); // 0, 1, 2
    return;
  }
  const chars = cleanChars(ev.messageChars ?? []);
  if (ev.programId === null) {
    const r = newRequest(state, ev, null, chars);
    dispatchRequest(state, r, fewestTokensBackend(state) as BackendBook); // 3
    return;
  }
  let p = state.programs.get(ev.programId);
  if (p === undefined) {
    p = createProgramRecord(
      ev.programId,
      ++state.programSeq,
      ev.parentProgramId ?? null,
      state.now,
    );
    state.programs.set(p.id, p);
  }
  p.steps++;
  touch(state, p);
  const r = newRequest(state, ev, p, chars);
  if (state.queue.has(p)) {
    park(state, p, r); // 4
    refreshProgram(state, p);
    tryResume(state);
    return;
  }
  if (p.backend !== null && !p.backend.healthy) detachForReplacement(state, p); // 5
  if (p.backend !== null) {
    dispatchRequest(state, r, p.backend); // 6
  } else if (state.config.mode === "default") {
    placeDefault(state, p, r); // 8
  } else {
    placeNew(state, p, r); // 7
  }
}

function admissionError(state: SchedulerState, ev: Arrival): MaitredError | null {
  if (state.shuttingDown) return Errors.shuttingDown();
  if (state.requests.has(ev.requestId)) return Errors.badRequest("Duplicate request id.");
  if (!anyHealthy(state)) return Errors.noHealthyBackend();
  return null;
}

function newRequest(
  state: SchedulerState,
  ev: Arrival,
  p: ProgramRecord | null,
  chars: number[],
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
    maxWaitMs: maxWait !== undefined && Number.isFinite(maxWait) && maxWait >= 0 ? maxWait : null,
    final: ev.final === true,
    promptChars,
    messageCount: chars.length,
    baseTokens,
    tokens: baseTokens,
    progressApplied: 0,
    usageSeen: false,
    cancelled: false,
  };
  state.requests.set(r.id, r);
  return r;
}

/** Attach a program placed without the queue; a program leaving a backend counts a migration. */
function placeDirect(state: SchedulerState, p: ProgramRecord, r: RequestRecord, b: BackendBook) {
  if (p.originBackend !== null && p.originBackend !== b.id) state.counters.migrations++;
  p.originBackend = null;
  attach(p, b);
  dispatchRequest(state, r, b);
}

function placeNew(state: SchedulerState, p: ProgramRecord, r: RequestRecord): void {
  const need = Math.max(footprintOf(p), r.tokens) + state.config.bufferPerProgram;
  const bs = state.backends;
  const i =
    state.waitingPrograms > 0
      ? -1
      : argMin(
          bs.length,
          (k) => isPlaceable(bs[k]) && (roomTokens(bs[k], state.config) as number) >= need,
          (k) => activeTokens(bs[k]),
        );
  if (i >= 0) {
    placeDirect(state, p, r, bs[i]);
    return;
  }
  p.pausedSince ??= state.now;
  enqueue(state, p);
  park(state, p, r);
  refreshProgram(state, p);
  tryResume(state);
}

function placeDefault(state: SchedulerState, p: ProgramRecord, r: RequestRecord): void {
  const bs = state.backends;
  const i = argMin(
    bs.length,
    (k) => bs[k].healthy,
    (k) => bs[k].programs.size,
  );
  placeDirect(state, p, r, bs[i]); // case 2 guarantees a healthy backend
}
