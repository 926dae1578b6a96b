import type { ClassIndex } from "./priority/priority-classes.ts";
import type {
  BackendBook,
  ClassBook,
  ProgramRecord,
  ProgramStatus,
  RequestRecord,
} from "./records.ts";

/**
 * Per-backend token books, kept incrementally: every change to a program's footprint, status,
 * mark or placement adjusts its backend's sums by the delta (O(1)), so reading `used` never
 * rescans programs.
 */

export function activePrograms(b: BackendBook): number {
  return b.reasoningPrograms + b.actingPrograms;
}

/** Tokens the router believes sit on the backend (programs + anonymous requests). */
export function activeTokens(b: BackendBook): number {
  return b.reasoningTokens + b.actingTokens + b.anonymousTokens;
}

/**
 * A backend the tr scheduler may place on: healthy, with a known capacity or, without one,
 * an engine report that says whether it queues (room.ts `capacityUnknownRoom`).
 */
export function isPlaceable(b: BackendBook): boolean {
  return b.healthy && (b.capacity !== null || (b.truth !== null && b.truth.waiting !== null));
}

/**
 * Acting-token decay `Σ tok·2^(−t)` (ThunderAgent's acting-token decay, t in seconds) kept as
 * `decaySum = Σ tok·2^((actingSince − decayBase)/1000)`, so reading it at `now` is one
 * multiplication by `2^(−(now − decayBase)/1000)`. Before the exponents could overflow a
 * double the base moves forward, which just scales the sum (O(1), no rescan).
 */
const DECAY_HALF_LIFE_MS = 1000;
/** 2^256 ≈ 1e77 times a token count stays far below Number.MAX_VALUE (≈ 2^1024). */
const DECAY_REBASE_MS = 256 * DECAY_HALF_LIFE_MS;

function moveDecayBase(b: BackendBook, base: number): void {
  b.decaySum *= 2 ** (-(base - b.decayBase) / DECAY_HALF_LIFE_MS);
  b.decayBase = base;
}

function addDecay(b: BackendBook, tokens: number, actingSince: number): void {
  if (actingSince - b.decayBase > DECAY_REBASE_MS) moveDecayBase(b, actingSince);
  b.decaySum += tokens * 2 ** ((actingSince - b.decayBase) / DECAY_HALF_LIFE_MS);
}

/** Acting tokens on `b` weighted by 2^(−seconds acting), at time `now`. */
export function decayedActingTokens(b: BackendBook, now: number): number {
  if (now - b.decayBase > DECAY_REBASE_MS) moveDecayBase(b, now);
  // Rounding can leave a tiny negative residue once every acting program has left.
  return Math.max(0, b.decaySum * 2 ** (-(now - b.decayBase) / DECAY_HALF_LIFE_MS));
}

/** Tokens a program books on its backend: none while its idle room is lent (lending.ts). */
export function bookedTokens(p: ProgramRecord): number {
  return p.lent ? 0 : p.tokens;
}

/** Headroom a program books on its backend: none while lent, like its tokens. */
export function bookedHeadroom(p: ProgramRecord): number {
  return p.lent ? 0 : p.headroom;
}

function addToBooks(p: ProgramRecord, b: BackendBook, sign: 1 | -1): void {
  const tokens = bookedTokens(p);
  const headroom = bookedHeadroom(p);
  if (p.status === "REASONING") {
    b.reasoningTokens += sign * tokens;
    b.reasoningPrograms += sign;
    b.reasoningHeadroom += sign * headroom;
  } else {
    b.actingTokens += sign * tokens;
    b.actingPrograms += sign;
    addDecay(b, sign * tokens, p.actingSince);
  }
  if (p.lent) {
    b.lentPrograms += sign;
    b.lentTokens += sign * p.tokens;
  }
  b.materialisedTokens += sign * p.creditTokens;
  b.headroomTokens += sign * headroom;
  if (p.markedForPause) {
    b.markedTokens += sign * tokens;
    b.markedPrograms += sign;
    b.markedHeadroom += sign * headroom;
  }
  const cb = b.classBooks;
  if (cb !== null) addToClassBook(cb[p.cls], p, sign * tokens, sign, sign * headroom);
  if (sign === -1) zeroEmptySums(b);
}

/**
 * The sums are running floats and what they add is fractional (headroom is a multiple of a
 * learned growth, estimates come from characters), so adding and taking away the same
 * programs can leave ±1e-10 instead of 0. A sum over no programs is exactly zero: set it so,
 * and an emptied backend's books read 0, never a tiny negative.
 */
function zeroEmptySums(b: BackendBook): void {
  if (b.reasoningPrograms === 0) {
    b.reasoningTokens = 0;
    b.reasoningHeadroom = 0;
  }
  if (b.actingPrograms === 0) {
    b.actingTokens = 0;
    b.decaySum = 0;
  }
  if (b.lentPrograms === 0) b.lentTokens = 0;
  if (b.markedPrograms === 0) {
    b.markedTokens = 0;
    b.markedHeadroom = 0;
  }
  if (b.reasoningPrograms + b.actingPrograms === 0) {
    b.materialisedTokens = 0;
    b.headroomTokens = 0;
  }
}

/**
 * The same sums per priority class (reservations: src/core/priority/class-room.ts), headroom
 * included, so a class's used room follows the backend's rule. `classBooks` is null when
 * priorities are off: these updates then cost one null check.
 */
function addToClassBook(
  book: ClassBook,
  p: ProgramRecord,
  tokens: number,
  programs: number,
  headroom: number,
): void {
  if (p.status === "REASONING") book.reasoningTokens += tokens;
  else book.actingTokens += tokens;
  book.programs += programs;
  book.headroomTokens += headroom;
  if (book.programs === 0) {
    // As zeroEmptySums: a class with no program on the backend books exactly nothing.
    book.reasoningTokens = 0;
    book.actingTokens = 0;
    book.headroomTokens = 0;
  }
}

/** Move a program to another priority class; an attached program's class books follow. */
export function setProgramClass(p: ProgramRecord, cls: ClassIndex): void {
  if (p.cls === cls) return;
  const cb = p.backend?.classBooks ?? null;
  if (cb !== null) addToClassBook(cb[p.cls], p, -bookedTokens(p), -1, -bookedHeadroom(p));
  p.cls = cls;
  if (cb !== null) addToClassBook(cb[p.cls], p, bookedTokens(p), 1, bookedHeadroom(p));
}

/** Register a program on a backend (ACTIVE). */
export function attach(p: ProgramRecord, b: BackendBook): void {
  p.backend = b;
  p.state = "ACTIVE";
  p.placedOnce = true;
  b.programs.add(p);
  addToBooks(p, b, 1);
}

/** Unregister a program from its backend; clears a pending mark. Returns the backend. */
export function detach(p: ProgramRecord): BackendBook | null {
  const b = p.backend;
  if (b === null) return null;
  addToBooks(p, b, -1);
  b.programs.delete(p);
  p.backend = null;
  p.markedForPause = false;
  p.lent = false; // lending is room on a backend: a program that leaves takes nothing along
  return b;
}

/** Largest context among the program's live requests, or its last known total. */
export function footprintOf(p: ProgramRecord): number {
  let tokens = p.knownTokens;
  for (const r of p.inFlight) if (r.tokens > tokens) tokens = r.tokens;
  for (const r of p.parked) if (r.tokens > tokens) tokens = r.tokens;
  return tokens;
}

/**
 * Recompute the footprint and apply the delta to the books. Concurrent requests of one
 * program share its context, so the footprint is their maximum, never their sum.
 */
export function refreshFootprint(p: ProgramRecord): void {
  const tokens = footprintOf(p);
  const delta = tokens - p.tokens;
  if (delta === 0) {
    refreshCredit(p);
    return;
  }
  p.tokens = tokens;
  refreshCredit(p);
  const b = p.backend;
  if (b === null) return;
  if (p.lent) {
    b.lentTokens += delta;
    return;
  }
  if (p.status === "REASONING") b.reasoningTokens += delta;
  else {
    b.actingTokens += delta;
    addDecay(b, delta, p.actingSince);
  }
  if (p.markedForPause) b.markedTokens += delta;
  if (b.classBooks !== null) addToClassBook(b.classBooks[p.cls], p, delta, 0, 0);
}

export function setStatus(p: ProgramRecord, status: ProgramStatus, now: number): void {
  if (p.status === status) return;
  const b = p.backend;
  if (b !== null) addToBooks(p, b, -1);
  p.status = status;
  if (status === "REASONING") p.lent = false; // it runs again: its room is its own
  p.creditTokens = creditTokensOf(p);
  if (status === "ACTING") p.actingSince = now;
  if (b !== null) addToBooks(p, b, 1);
}

/**
 * What a program counts for in its backend's materialised sum, the "tokens we count on the
 * GPU" side of the shared credit (backend-health.ts): its footprint while REASONING with a
 * request the engine has prefilled (first token out), else 0. A request still waiting or
 * prefilling holds fewer blocks than we count, and that gap is not sharing.
 */
export function creditTokensOf(p: ProgramRecord): number {
  if (p.status !== "REASONING") return 0;
  for (const r of p.inFlight) if (r.prefilled) return p.tokens;
  return 0;
}

/** Re-derive `creditTokens` (after a first token, a footprint change, a request's end). */
export function refreshCredit(p: ProgramRecord): void {
  const credit = creditTokensOf(p);
  const delta = credit - p.creditTokens;
  if (delta === 0) return;
  p.creditTokens = credit;
  if (p.backend !== null) p.backend.materialisedTokens += delta;
}

/** Change a program's headroom; its backend's sums follow (headroom.ts decides the value). */
export function setHeadroom(p: ProgramRecord, headroom: number): void {
  const delta = headroom - p.headroom;
  if (delta === 0) return;
  p.headroom = headroom;
  const b = p.backend;
  if (b === null || p.lent) return;
  b.headroomTokens += delta;
  if (p.status === "REASONING") b.reasoningHeadroom += delta;
  if (p.markedForPause) b.markedHeadroom += delta;
  if (b.classBooks !== null) b.classBooks[p.cls].headroomTokens += delta;
}

/**
 * Lend a program's booked room to waiting work, or take it back (lending.ts decides when).
 * Its backend's sums follow; a REASONING program is never lent.
 */
export function setLent(p: ProgramRecord, lent: boolean): void {
  if (p.lent === lent) return;
  const b = p.backend;
  if (b !== null) addToBooks(p, b, -1);
  p.lent = lent;
  if (b !== null) addToBooks(p, b, 1);
}

/** Take back a program's mark (its room is freed another way: lending.ts). */
export function unmarkForPause(p: ProgramRecord): void {
  const b = p.backend;
  if (!p.markedForPause || b === null) return;
  p.markedForPause = false;
  b.markedTokens -= bookedTokens(p);
  b.markedPrograms -= 1;
  b.markedHeadroom -= bookedHeadroom(p);
  zeroEmptySums(b);
}

export function markForPause(p: ProgramRecord): void {
  const b = p.backend;
  if (p.markedForPause || b === null) return;
  p.markedForPause = true;
  b.markedTokens += bookedTokens(p);
  b.markedPrograms += 1;
  b.markedHeadroom += bookedHeadroom(p);
}

/** Anonymous requests count in their backend's load while in flight. */
export function addAnonymous(b: BackendBook, r: RequestRecord, sign: 1 | -1): void {
  b.anonymousInFlight += sign;
  b.anonymousTokens += sign * r.tokens;
  if (b.anonymousInFlight === 0) b.anonymousTokens = 0;
}
