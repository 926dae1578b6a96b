import { Errors } from "../errors.ts";
import { carryOf, rememberEnded } from "./ended-ids.ts";
import { addAnonymous, detach } from "./ledger.ts";
import { dequeue, touch, unpark } from "./queue.ts";
import type { ProgramRecord } from "./records.ts";
import type { SchedulerState } from "./scheduler-state.ts";
import { leaveTree } from "./tree.ts";

export type ReleaseReason = "release" | "final" | "idle" | "budget" | "likely_done" | "parent";

/**
 * An anonymous program lives for its one request: once that request was answered without
 * running (rejected, timed out, its client gone while held) the program ends too, or it
 * would sit in the queue with nothing to send and nobody able to release it.
 */
export function endIfAnonymousAndDone(state: SchedulerState, p: ProgramRecord | null): void {
  if (p === null || !p.anonymous || p.parked.length > 0 || p.inFlight.length > 0) return;
  if (p.state === "TERMINATED") return;
  releaseProgram(state, p, "final");
}

/**
 * End of a program (explicit `program_release`, a `final` request's response, the idle lease,
 * a budget, the likely-done rule, or its parent's end). Cases:
 *   1. parked requests are rejected, never dispatched anywhere (ThunderAgent wakes them and sends
 *      them to the default backend);
 *   2. it leaves the queue or its backend, so its tokens free at once;
 *   3. requests still in flight (concurrent ones) finish as anonymous requests, so the
 *      backend's load stays honest until they end;
 *   4. its sub-agents end with it, and theirs (tree.ts).
 * The caller tries a resume afterwards: capacity was freed.
 */
export function releaseProgram(
  state: SchedulerState,
  p: ProgramRecord,
  reason: ReleaseReason,
): void {
  for (const r of p.parked.slice()) {
    unpark(state, r);
    state.requests.delete(r.id);
    state.effects.reject(
      r.id,
      Errors.notFound(`Program ${p.id} was released while this request waited.`, "program_id"),
    );
  }
  dequeue(state, p);
  const b = detach(p);
  for (const r of p.inFlight) {
    r.program = null;
    if (r.backend !== null) addAnonymous(r.backend, r, 1);
  }
  p.inFlight = [];
  p.state = "TERMINATED";
  if (state.programs.get(p.id) === p) state.programs.delete(p.id);
  state.idleOrder.delete(p);
  state.likelyDone.delete(p);
  p.likelyDoneAt = null;
  state.counters.releases++;
  if (reason === "idle") state.counters.idleReleases++;
  state.effects.log("debug", "program released", {
    programId: p.id,
    backend: b?.id ?? null,
    reason,
    steps: p.steps,
  });
  // The router ended it on its own: a return goes on under its budget (ended-ids.ts), and the
  // likely-done rule counts it.
  if (reason === "likely_done" || (reason === "idle" && p.budget !== null))
    rememberEnded(state, p.id, reason, carryOf(p));
  // Its sub-agents end with it (tree.ts); its parent was waiting on it until now.
  const parent = p.parent;
  for (const child of leaveTree(p)) releaseProgram(state, child, "parent");
  if (parent !== null && parent.state !== "TERMINATED") touch(state, parent);
}
