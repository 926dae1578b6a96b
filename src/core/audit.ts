import { bookedHeadroom, bookedTokens, creditTokensOf, footprintOf } from "./ledger.ts";
import type { BackendBook } from "./records.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/**
 * The books recounted from scratch: every per-backend sum the ledger keeps incrementally,
 * derived again from the program and request records, plus the queue's counters. Returns one
 * line per disagreement (empty = consistent). O(programs + requests); the property tests call
 * it after every event, the run loop never does.
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
    if (p.lent) s.lentPrograms++;
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

export function auditBooks(state: SchedulerState): string[] {
  const out: string[] = [];
  for (const b of state.backends) {
    const want = expected(state, b);
    const got: Sums = { ...(b as unknown as Sums), inFlight: b.inFlight.size };
    for (const key of Object.keys(want)) {
      if (Math.abs(got[key] - want[key]) > EPSILON) {
        out.push(`${b.id}.${key}: books ${got[key]}, recount ${want[key]}`);
      }
    }
    for (const p of b.programs) {
      if (p.backend !== b || p.state !== "ACTIVE")
        out.push(`${p.id} listed on ${b.id} but not there`);
    }
  }
  for (const p of state.programs.values()) {
    if (p.tokens !== footprintOf(p))
      out.push(`${p.id}: tokens ${p.tokens}, footprint ${footprintOf(p)}`);
    if (p.lent && p.status !== "ACTING") out.push(`${p.id}: lent while ${p.status}`);
    const queued = state.queue.has(p);
    if (queued !== (p.state === "PAUSED")) out.push(`${p.id}: ${p.state} but queued=${queued}`);
    if (!queued && p.parked.length > 0) out.push(`${p.id}: parked requests outside the queue`);
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
