/**
 * The soak's two counts of its requests, held against each other once load stops: what it sent
 * to the router, by path (and which of those it gave up on, and which failed at the client),
 * and what the router's access log says it read (every cell's lines summed, tallied as they
 * come, so a day's lines are never held in memory).
 */
import type { StepClient } from "../step-client.ts";
import {
  type AccessCount,
  type AccessLine,
  type FaultWindow,
  inAnyWindow,
  isFailure,
  parseAccessLine,
} from "./invariants.ts";

export const CHAT_PATH = "/v1/chat/completions";
export const RELEASE_PATH = "/programs/release";
/** The router's own views, which the soak reads from each router directly, never via HAProxy. */
const DIRECT_PATHS: ReadonlySet<string> = new Set(["/programs", "/backends"]);

export interface RequestLedger {
  /** Every request the soak sent to the router, by path: the access log must have as many lines. */
  readonly sent: Map<string, number>;
  /** Requests the soak gave up on before any answer: the router may never have seen them. */
  readonly gaveUp: Map<string, number>;
  /** When the soak's own requests failed, by path (a killed cell may take their log lines). */
  readonly clientFailures: { path: string; atMs: number }[];
  count(path: string): void;
  unanswered(path: string): void;
}

export function createLedger(): RequestLedger {
  const sent = new Map<string, number>();
  const gaveUp = new Map<string, number>();
  return {
    sent,
    gaveUp,
    clientFailures: [],
    count: (path) => sent.set(path, (sent.get(path) ?? 0) + 1),
    unanswered: (path) => gaveUp.set(path, (gaveUp.get(path) ?? 0) + 1),
  };
}

/** `client`, with every request it sends counted in `ledger`. */
export function countedClient(
  client: StepClient,
  ledger: RequestLedger,
  now: () => number = Date.now,
): StepClient {
  return {
    async send(req, signal) {
      ledger.count(CHAT_PATH);
      try {
        const res = await client.send(req, signal);
        if (!res.ok) ledger.clientFailures.push({ path: CHAT_PATH, atMs: now() });
        return res;
      } catch (err) {
        // Aborted when load stopped: it may have left before the router read it.
        ledger.unanswered(CHAT_PATH);
        throw err;
      }
    },
    async release(id) {
      ledger.count(RELEASE_PATH);
      const answered = await client.release(id);
      // A release lost on the wire (a reset, the pool closing as load stops) may never have
      // reached the router's log: given up, as a chat request that failed before an answer.
      if (!answered) ledger.unanswered(RELEASE_PATH);
      return answered;
    },
    close: () => client.close(),
  };
}

/** What the access log said, kept as its lines come. */
export interface AccessTally {
  byPath: Map<string, number>;
  /** Lines of requests the router failed (invariants.ts `isFailure`). */
  failed: AccessLine[];
  /** Lines of requests held longer than the max pause. */
  held: AccessLine[];
}

export const createAccessTally = (): AccessTally => ({ byPath: new Map(), failed: [], held: [] });

/** Count one line a router logged; any line but an access log line is left alone. */
export function tallyAccessLine(t: AccessTally, line: string, maxPauseMs: number): void {
  const l = parseAccessLine(line);
  if (l === null) return;
  t.byPath.set(l.path, (t.byPath.get(l.path) ?? 0) + 1);
  if (isFailure(l)) t.failed.push(l);
  if (l.heldMs !== null && l.heldMs > maxPauseMs) t.held.push(l);
}

export interface AccessCountOptions {
  /** HAProxy's retries on another cell (0 without HAProxy). */
  retried: number;
  /** Whether the load went through HAProxy (`--cells`). */
  behindHaproxy: boolean;
  /** The cells' kill windows: a killed cell takes the lines of what it was answering. */
  cellKills: readonly FaultWindow[];
  graceMs: number;
}

/** Each path the soak sent, in the order it was first sent, against the access log's lines. */
export function accessCounts(
  ledger: RequestLedger,
  tally: AccessTally,
  o: AccessCountOptions,
): AccessCount[] {
  return [...ledger.sent].map(([path, n]) => ({
    path,
    sent: n,
    gaveUp: ledger.gaveUp.get(path) ?? 0,
    lines: tally.byPath.get(path) ?? 0,
    // Only the paths sent through HAProxy are retried by it or lost with a cell.
    retried: o.behindHaproxy && !DIRECT_PATHS.has(path) ? o.retried : 0,
    lostWithCell: ledger.clientFailures.filter(
      (f) => f.path === path && inAnyWindow(f.atMs, o.cellKills, o.graceMs),
    ).length,
  }));
}
