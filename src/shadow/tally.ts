/**
 * What the shadow's decisions add up to, beside what the router did: the decisions by kind,
 * the seats it would have placed elsewhere, the requests it would have held and how each hold
 * ended, the pauses it would have made and how long they lasted, and the first decision that
 * would have changed the traffic. shadow.ts feeds it; the summary, the metrics and the live
 * page read it.
 */
import type { Logger } from "../util/logger.ts";
import { DECISION_KINDS, type Decision, type DecisionKind } from "./decisions.ts";

/** A decision of the shadow, beside what the router actually did. */
export interface ShadowDecision extends Decision {
  /**
   * A request's decision (seat, hold, reject): the backend the router actually sent that
   * request to; null when the router refused it, or for a program's decision.
   */
  actualBackend: string | null;
  /** Carried out, it would have changed the traffic the router sent (see the file's header). */
  changesTraffic: boolean;
}

/** How a request the shadow held stopped being held. */
export const HOLD_ENDS = ["seated", "rejected", "request_ended"] as const;
export type HoldEnd = (typeof HOLD_ENDS)[number];

export interface HoldObservation {
  end: HoldEnd;
  ms: number;
}

export interface DurationView {
  count: number;
  totalMs: number;
  /** Median of the last DURATIONS_KEPT; null before any. */
  p50Ms: number | null;
  maxMs: number | null;
}

/** Durations kept for the median; count, total and max cover every one. */
const DURATIONS_KEPT = 10_000;
/** Observations kept until the run loop's hook takes them (src/runtime/observation-taps.ts). */
const OBSERVATIONS_KEPT = 10_000;
/** Decisions kept for the summary and the live page. */
const RECENT_KEPT = 50;

function createDurations() {
  let count = 0;
  let totalMs = 0;
  let maxMs = 0;
  const kept: number[] = [];
  let next = 0;
  return {
    add(ms: number) {
      count++;
      totalMs += ms;
      maxMs = Math.max(maxMs, ms);
      if (kept.length < DURATIONS_KEPT) kept.push(ms);
      else kept[next] = ms;
      next = (next + 1) % DURATIONS_KEPT;
    },
    view(): DurationView {
      if (count === 0) return { count, totalMs, p50Ms: null, maxMs: null };
      const sorted = [...kept].sort((a, b) => a - b);
      return { count, totalMs, p50Ms: sorted[Math.floor((sorted.length - 1) / 2)], maxMs };
    },
  };
}

function zeroKinds(): Record<DecisionKind, number> {
  return Object.fromEntries(DECISION_KINDS.map((k) => [k, 0])) as Record<DecisionKind, number>;
}

/**
 * Keeps at least the newest OBSERVATIONS_KEPT items. The oldest are dropped in one go once the
 * list holds twice that many: a list nobody drains (no scraper) then costs O(1) per item, where
 * dropping one at every push shifted the whole list each time.
 */
function pushBounded<T>(list: T[], item: T): void {
  list.push(item);
  if (list.length >= 2 * OBSERVATIONS_KEPT) list.splice(0, list.length - OBSERVATIONS_KEPT);
}

/** What a drain with nothing to hand over returns: read only, never written, shared. */
const NOTHING: never[] = Object.freeze([]) as never[];
export interface TallyOptions {
  logger: Logger;
  onHeld?(): void;
  onDecision?(d: ShadowDecision): void;
}

export function createTally(options: TallyOptions) {
  const { logger } = options;
  const decisions = zeroKinds();
  const seats = { total: 0, elsewhere: 0, same: 0, unknown: 0 };
  const holdEnds: Record<HoldEnd, number> = { seated: 0, rejected: 0, request_ended: 0 };
  const pauseDurations = createDurations();
  const holdDurations = createDurations();
  const recent: ShadowDecision[] = [];
  let holdObservations: HoldObservation[] = [];
  let pauseObservations: number[] = [];
  let pauses = 0;
  let held = 0;
  let trafficChanges = 0;
  let firstChange: ShadowDecision | null = null;
  /** What the router did with each live request: its backend, or null when it refused it. */
  const actual = new Map<string, string | null>();
  /** Requests the shadow holds, and since when (event time). */
  const heldSince = new Map<string, number>();

  function endHold(requestId: string, end: HoldEnd, ms: number): void {
    if (!heldSince.delete(requestId)) return;
    holdEnds[end]++;
    holdDurations.add(ms);
    pushBounded(holdObservations, { end, ms });
  }

  function record(d: Decision): void {
    const known = d.requestId !== null && actual.has(d.requestId);
    const actualBackend = known ? (actual.get(d.requestId as string) ?? null) : null;
    let changesTraffic = false;
    switch (d.kind) {
      case "seat":
        seats.total++;
        if (!known) seats.unknown++;
        else if (actualBackend === d.backend) seats.same++;
        else {
          seats.elsewhere++;
          changesTraffic = true;
        }
        if (d.requestId !== null) {
          const since = heldSince.get(d.requestId);
          if (since !== undefined) endHold(d.requestId, "seated", d.waitedMs ?? d.at - since);
        }
        break;
      case "hold":
        held++;
        changesTraffic = true;
        if (d.requestId !== null) heldSince.set(d.requestId, d.at);
        options.onHeld?.();
        break;
      case "reject": {
        // Refusing what the router refused too (no healthy backend, a spent budget) is no change.
        changesTraffic = !(known && actualBackend === null);
        const since = d.requestId === null ? undefined : heldSince.get(d.requestId);
        if (since !== undefined) endHold(d.requestId as string, "rejected", d.at - since);
        break;
      }
      case "preempt":
        changesTraffic = true;
        break;
      case "pause":
        pauses++;
        break;
      default:
        if (d.kind.endsWith("resume") && d.waitedMs !== null) {
          pauseDurations.add(d.waitedMs);
          pushBounded(pauseObservations, d.waitedMs);
        }
    }
    decisions[d.kind]++;
    const sd: ShadowDecision = { ...d, actualBackend, changesTraffic };
    if (changesTraffic) {
      trafficChanges++;
      firstChange ??= sd;
    }
    recent.unshift(sd);
    if (recent.length > RECENT_KEPT) recent.pop();
    logger.debug("shadow decision", {
      kind: d.kind,
      programId: d.programId,
      ...(d.requestId === null ? {} : { requestId: d.requestId }),
      backend: d.backend,
      reason: d.reason,
      ...(d.kind === "seat" ? { actualBackend } : {}),
      changesTraffic,
    });
    options.onDecision?.(sd);
  }

  return {
    actual,
    heldSince,
    record,
    endHold,
    get trafficChanges() {
      return trafficChanges;
    },
    decisions: () => ({ ...decisions }),
    seats: () => ({ ...seats }),
    seatsElsewhere: () => seats.elsewhere,
    firstChange: () => firstChange,
    paused: () => ({ pauses, durations: pauseDurations.view() }),
    held: () => ({ held, ends: { ...holdEnds }, durations: holdDurations.view() }),
    recent: () => [...recent],
    /** The longest hold still going on at `now` (ms); null when none is held. */
    longestHold(now: number): number | null {
      let longest: number | null = null;
      for (const since of heldSince.values()) longest = Math.max(longest ?? 0, now - since);
      return longest;
    },
    drainHoldObservations(): HoldObservation[] {
      if (holdObservations.length === 0) return NOTHING;
      const list = holdObservations;
      holdObservations = [];
      return list;
    },
    drainPauseObservations(): number[] {
      if (pauseObservations.length === 0) return NOTHING;
      const list = pauseObservations;
      pauseObservations = [];
      return list;
    },
  };
}
