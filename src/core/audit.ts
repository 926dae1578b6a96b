import { bookedHeadroom, bookedTokens, creditTokensOf, footprintOf } from "./ledger.ts";
import type { BackendBook, ClassBook, ProgramRecord } from "./records.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/**
 * The books recounted from scratch: every per-backend sum the ledger keeps incrementally
 * (per-class sums and the acting-token decay included), derived again from the program and
 * request records, plus the queue's counters and every program's own fields, the one-step
 * programs of anonymous requests included. Returns one line per disagreement (empty =
 * consistent). O(programs + requests); the property tests call it after every event, the run
 * loop never does.
 */

type Sums = Record<string, number>;

const EPSILON = 1e-6;

function expected(state: SchedulerState, b: BackendBook): Sums {
  const s: Sums = {
    reasoningTokens: 0,
    actingTokens: 0,
    reasoningPrograms: 0,
    actingPrograms: 0,
    headroomTokens: 0,
    reasoningHeadroom: 0,
    markedTokens: 0,
    markedPrograms: 0,
    markedHeadroom: 0,
    materialisedTokens: 0,
    lentPrograms: 0,
    lentTokens: 0,
    anonymousInFlight: 0,
    anonymousTokens: 0,
    inFlight: 0,
  };
  for (const p of b.programs) {
    const tokens = bookedTokens(p);
    const headroom = bookedHeadroom(p);
    if (p.status === "REASONING") {
      s.reasoningTokens += tokens;
      s.reasoningPrograms++;
      s.reasoningHeadroom += headroom;
    } else {
      s.actingTokens += tokens;
      s.actingPrograms++;
    }
    s.headroomTokens += headroom;
    if (p.lent) {
      s.lentPrograms++;
      s.lentTokens += p.tokens;
    }
    if (p.markedForPause) {
      s.markedTokens += tokens;
      s.markedPrograms++;
      s.markedHeadroom += headroom;
    }
    s.materialisedTokens += creditTokensOf(p);
  }
  for (const r of state.requests.values()) {
    if (r.backend !== b) continue;
    s.inFlight++;
    if (r.program === null) {
      s.anonymousInFlight++;
      s.anonymousTokens += r.tokens;
    }
  }
  return s;
}

function compare(out: string[], where: string, got: Sums, want: Sums): void {
  for (const key of Object.keys(want)) {
    if (Math.abs(got[key] - want[key]) > EPSILON) {
      out.push(`${where}.${key}: books ${got[key]}, recount ${want[key]}`);
    }
  }
}

/** Per-class sums on `b`, recounted (priorities on). */
function auditClassBooks(out: string[], b: BackendBook, books: readonly ClassBook[]): void {
  const want = books.map(() => ({
    reasoningTokens: 0,
    actingTokens: 0,
    programs: 0,
    headroomTokens: 0,
  }));
  for (const p of b.programs) {
    const w = want[p.cls];
    if (p.status === "REASONING") w.reasoningTokens += bookedTokens(p);
    else w.actingTokens += bookedTokens(p);
    w.programs++;
    w.headroomTokens += bookedHeadroom(p);
  }
  books.forEach((got, cls) => {
    compare(out, `${b.id}.class${cls}`, got as unknown as Sums, want[cls]);
  });
}

/**
 * The acting-token decay, compared at `now` (where rounding residues of programs long gone
 * have decayed away) rather than as the raw accumulator, whose scale moves with its base.
 */
function auditDecay(out: string[], b: BackendBook, now: number): void {
  let want = 0;
  for (const p of b.programs) {
    if (p.status === "ACTING") want += bookedTokens(p) * 2 ** (-(now - p.actingSince) / 1000);
  }
  const got = Math.max(0, b.decaySum * 2 ** (-(now - b.decayBase) / 1000));
  if (Math.abs(got - want) > 1e-3 * Math.max(1, want)) {
    out.push(`${b.id}.decayedActingTokens: books ${got}, recount ${want}`);
  }
}

export function auditBooks(state: SchedulerState): string[] {
  const out: string[] = [];
  const anonymous: ProgramRecord[] = [];
  for (const b of state.backends) {
    const got: Sums = { ...(b as unknown as Sums), inFlight: b.inFlight.size };
    compare(out, b.id, got, expected(state, b));
    if (b.classBooks !== null) auditClassBooks(out, b, b.classBooks);
    auditDecay(out, b, state.now);
    for (const p of b.programs) {
      if (p.backend !== b || p.state !== "ACTIVE")
        out.push(`${p.id} listed on ${b.id} but not there`);
      if (p.anonymous) anonymous.push(p);
    }
  }
  for (const p of state.queue) if (p.anonymous) anonymous.push(p);
  for (const p of [...state.programs.values(), ...anonymous]) {
    if (p.tokens !== footprintOf(p))
      out.push(`${p.id}: tokens ${p.tokens}, footprint ${footprintOf(p)}`);
    if (p.lent && p.status !== "ACTING") out.push(`${p.id}: lent while ${p.status}`);
    const queued = state.queue.has(p);
    if (queued !== (p.state === "PAUSED")) out.push(`${p.id}: ${p.state} but queued=${queued}`);
    if (!queued && p.parked.length > 0) out.push(`${p.id}: parked requests outside the queue`);
    // The tree links both ways, between live programs only (tree.ts).
    if (p.parent !== null && (!p.parent.children.has(p) || p.parent.state === "TERMINATED"))
      out.push(`${p.id}: parent ${p.parent.id} does not list it, or has ended`);
    for (const c of p.children)
      if (c.parent !== p || c.state === "TERMINATED") out.push(`${p.id}: child ${c.id} unlinked`);
    if (p.likelyDoneAt !== null && !state.likelyDone.has(p))
      out.push(`${p.id}: likely done but not in the likely-done list`);
  }
  let waiting = 0;
  for (const p of state.queue) if (p.parked.length > 0) waiting++;
  if (waiting !== state.waitingPrograms) {
    out.push(`waitingPrograms: books ${state.waitingPrograms}, recount ${waiting}`);
  }
  let parked = 0;
  for (const p of state.queue) parked += p.parked.length;
  if (parked !== state.parkedOrder.size) {
    out.push(`parked requests: index ${state.parkedOrder.size}, recount ${parked}`);
  }
  return out;
}
