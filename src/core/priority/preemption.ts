import { Errors } from "../../errors.ts";
import { bookedHeadroom, bookedTokens, isPlaceable, setStatus } from "../ledger.ts";
import { pauseProgram } from "../program-moves.ts";
import { refreshProgram } from "../queue.ts";
import type { BackendBook, ProgramRecord } from "../records.ts";
import { releaseProgram } from "../release.ts";
import { roomAfterFreeing } from "../room.ts";
import type { SchedulerState } from "../scheduler-state.ts";
import { holdFor } from "./class-room.ts";
import { type ClassIndex, PRIORITY_CLASSES } from "./priority-classes.ts";
import { countAdmission } from "./priority-state.ts";

/**
 * Preemption, in programs and KV tokens: a request of a class
 * that may preempt finds no room, so at most one program of a strictly lower class gives way:
 *   1. an ACTING victim is paused at once (its KV is idle between turns);
 *   2. a REASONING victim is eligible only while none of its requests has had its first byte
 *      committed (TTFT protection); its requests are cancelled with 503 `preempted` and it is
 *      paused, so its tokens leave the books at once;
 *   3. victim order: lowest class, then most recently admitted (least work thrown away), then id;
 *   4. slots are uniform in the gateway but footprints are not: only a victim whose tokens make
 *      the request fit on its backend is taken, so no work is thrown away for nothing.
 */

export interface PreemptionVictim {
  program: ProgramRecord;
  backend: BackendBook;
}

function eligible(p: ProgramRecord, cls: ClassIndex): boolean {
  if (p.cls <= cls) return false;
  for (const r of p.inFlight) if (r.firstByte || r.cancelled) return false; // 2
  return true;
}

/**
 * Tokens the books free when `p` leaves its backend: what it books, its tokens and its own
 * headroom (nothing for a program whose room is already lent).
 */
function freedTokens(state: SchedulerState, p: ProgramRecord): number {
  const weight = p.status === "ACTING" ? state.config.actingTokenWeight : 1;
  return weight * bookedTokens(p) + bookedHeadroom(p);
}

/** Whether any program of a class below `cls` is on `b` (skips the scan of its programs). */
function hasLowerClass(b: BackendBook, cls: ClassIndex): boolean {
  const books = b.classBooks;
  if (books === null) return false;
  for (let c = cls + 1; c < books.length; c++) if (books[c].programs > 0) return true;
  return false;
}

function better(a: ProgramRecord, b: ProgramRecord | null): boolean {
  if (b === null) return true;
  if (a.cls !== b.cls) return a.cls > b.cls;
  if (a.admitSeq !== b.admitSeq) return a.admitSeq > b.admitSeq;
  return a.id < b.id;
}

/** The victim for a class-`cls` request needing `need` tokens, or null (cases 2–4). */
export function findPreemptionVictim(
  state: SchedulerState,
  cls: ClassIndex,
  need: number,
): PreemptionVictim | null {
  let best: ProgramRecord | null = null;
  let where: BackendBook | null = null;
  for (const b of state.backends) {
    if (!isPlaceable(b) || !hasLowerClass(b, cls)) continue;
    const hold = holdFor(state, b, cls);
    for (const p of b.programs) {
      if (!eligible(p, cls)) continue;
      const room = (roomAfterFreeing(state, b, freedTokens(state, p)) as number) - hold;
      if (room < need) continue; // 4
      if (better(p, best)) {
        best = p;
        where = b;
      }
    }
  }
  return best === null ? null : { program: best, backend: where as BackendBook };
}

/** Take the victim (cases 1–2); the caller places the preempting program on its backend. */
export function preemptVictim(
  state: SchedulerState,
  victim: PreemptionVictim,
  forClass: ClassIndex,
): void {
  const p = victim.program;
  const cancelled: string[] = [];
  for (const r of p.inFlight) {
    r.cancelled = true;
    r.backend?.inFlight.delete(r);
    // Detached from program and backend: its later `request_finished` changes nothing.
    r.backend = null;
    r.program = null;
    cancelled.push(r.id);
    countAdmission(state, r.cls, "preempted");
    state.effects.cancel(r.id, Errors.preempted());
  }
  if (cancelled.length > 0) {
    p.inFlight = [];
    refreshProgram(state, p);
    setStatus(p, "ACTING", state.now);
  }
  // An anonymous program's one request was just cancelled: it ends rather than wait idle.
  if (p.anonymous) releaseProgram(state, p, "final");
  else pauseProgram(state, p, "preempted");
  if (state.priority !== null) state.priority.counters[p.cls].preemptions++;
  state.effects.log("info", "program preempted", {
    programId: p.id,
    backend: victim.backend.id,
    class: PRIORITY_CLASSES[p.cls],
    byClass: PRIORITY_CLASSES[forClass],
    cancelledRequests: cancelled,
  });
}

/**
 * Preempt for a class-`cls` request needing `need` tokens when its class may; returns the
 * backend that now has room for it, or null when no victim qualifies.
 */
export function tryPreempt(
  state: SchedulerState,
  cls: ClassIndex,
  need: number,
): BackendBook | null {
  const pr = state.priority;
  if (pr === null || !pr.config.classes[cls].preempt) return null;
  const victim = findPreemptionVictim(state, cls, need);
  if (victim === null) return null;
  preemptVictim(state, victim, cls);
  return victim.backend;
}
