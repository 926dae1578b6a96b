/**
 * Shadow mode: a second scheduler core, in tr mode, beside the router's own, which routes as
 * the default router does. The shadow sees every event the router's core handled, in the same
 * order and with the same engine samples (it listens on the router's run loop: `hooks`), and
 * runs in a run loop of its own whose effects are recorded, never carried out: no request is
 * held, refused or seated by it. Each decision it would have made (decisions.ts) is counted,
 * logged at debug as `shadow decision`, and compared with what the router actually did: a seat
 * on another backend than the one the router chose, a request it would have held or refused,
 * a program it would have preempted are decisions that would have changed the traffic.
 *
 * Approximation: the shadow's books follow the traffic the router really sent, not the one tr
 * would have sent. Up to the first decision that would have changed the traffic, the events,
 * the engines' samples and therefore the shadow's decisions are exactly tr's own (the
 * simulator checks it: test/simulate/shadow-run.test.ts). After it they drift apart: a request
 * the shadow holds was in fact served, so the shadow later hears of its first token and its end
 * for a request it never seated (the core ignores the first and takes the end as a held
 * request whose client left), and the engines' samples show load tr would not have admitted.
 * `summary().firstChange` says when that happened. Pauses, marks and lending change no traffic
 * by themselves (tr tells the engine nothing): only the hold of the paused program's next
 * request does. Also: the first-byte commit of a request reaches only the router's core (the
 * shadow learns of the first byte from `request_first_token`); and priority classes, which the
 * default router does not resolve, reach the shadow as the default class.
 *
 * A failure inside the shadow (its core throwing, a bug here) is caught, counted and logged;
 * it never reaches the router's run loop.
 */
import type {
  BackendSpec,
  CreateSchedulerOptions,
  Scheduler,
  SchedulerConfig,
  SchedulerSnapshot,
} from "../core/api.ts";
import type { SchedulerEvent } from "../core/events.ts";
import { createScheduler } from "../core/scheduler.ts";
import { createRunLoop, type RunLoop, type RunLoopHooks } from "../runtime/run-loop.ts";
import type { Logger } from "../util/logger.ts";
import {
  createDecisionRecorder,
  DECISION_KINDS,
  type Decision,
  type DecisionKind,
} from "./decisions.ts";
import { createEvidenceRecorder, type EngineEvidence } from "./engine-evidence.ts";

export { DECISION_KINDS, type Decision, type DecisionKind } from "./decisions.ts";
export type { EngineEvidence } from "./engine-evidence.ts";

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

export interface ShadowSummary {
  /** Runtime clock (ms) when the shadow started, and now. */
  since: number;
  now: number;
  /** Events the shadow was fed. */
  events: number;
  /** Failures caught inside the shadow. */
  errors: number;
  decisions: Record<DecisionKind, number>;
  /** The first decision that would have changed the traffic: from then on, an estimate. */
  firstChange: ShadowDecision | null;
  paused: {
    /** Programs the shadow holds paused now; null if its core could not say. */
    now: number | null;
    /** The longest of those pauses so far (ms); null when none is paused. */
    longestNowMs: number | null;
    pauses: number;
    /** Pause → resume pairs: how long each program would have stayed paused. */
    durations: DurationView;
  };
  held: {
    /** Requests the shadow holds now; null if its core could not say. */
    now: number | null;
    /** The longest of those holds so far (ms); null when none is held. */
    longestNowMs: number | null;
    held: number;
    /** How long each would have been held, by how its hold ended. */
    ends: Record<HoldEnd, number>;
    durations: DurationView;
  };
  seats: { total: number; elsewhere: number; same: number; unknown: number };
  engines: EngineEvidence;
  /** The newest decisions, newest first. */
  recent: ShadowDecision[];
}

export interface ShadowOptions {
  /** The router's scheduler settings: the shadow runs them in tr mode. */
  config: SchedulerConfig;
  backends: BackendSpec[];
  logger: Logger;
  /** The runtime's clock (ms). */
  now(): number;
  /** The shadow held a request: a deadline of its (max wait) may come before the next tick. */
  onHeld?(): void;
  /** Each decision as it is made (the simulator's check). */
  onDecision?(d: ShadowDecision): void;
  /** Replace the core (tests: one that throws). */
  createScheduler?(options: CreateSchedulerOptions): Scheduler;
}

export interface Shadow {
  /** For the router's run loop: every event it handled, and the backends its core chose. */
  readonly hooks: RunLoopHooks;
  /** The shadow core's next deadline (null if none, or if it failed). */
  nextDeadline(): number | null;
  summary(): ShadowSummary;
  /** Monotonic counts, cheap to read (metrics). */
  counts(): {
    decisions: Record<DecisionKind, number>;
    seatsElsewhere: number;
    trafficChanges: number;
    errors: number;
    overflowTicks: number;
  };
  /** Programs paused and requests held by the shadow now (null if its core could not say). */
  gauges(): { pausedPrograms: number | null; heldRequests: number | null };
  /** Requests the shadow keeps a record of: those not finished yet, whatever its core did. */
  followed(): number;
  /** Hold lengths since the last call (bounded), for a histogram. */
  drainHoldObservations(): HoldObservation[];
  /** Pause lengths (pause → resume, ms) since the last call (bounded). */
  drainPauseObservations(): number[];
  /** The shadow's core, read-only (tests); null if it could not be built. */
  readonly scheduler: Scheduler | null;
}

/** Durations kept for the median; count, total and max cover every one. */
const DURATIONS_KEPT = 10_000;
/** Observations kept until the run loop's hook takes them (src/runtime/observation-taps.ts). */
const OBSERVATIONS_KEPT = 10_000;
/** Decisions kept for the summary and the live page. */
const RECENT_KEPT = 50;
/**
 * Failures logged at error before the log goes quiet: a shadow that throws on every event would
 * otherwise write a line per request. Every one is counted; one line per this many after that.
 */
const ERRORS_LOGGED = 5;
const ERRORS_LOG_EVERY = 1000;

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
export function createShadow(options: ShadowOptions): Shadow {
  const { logger } = options;
  const since = options.now();
  const decisions = zeroKinds();
  const seats = { total: 0, elsewhere: 0, same: 0, unknown: 0 };
  const holdEnds: Record<HoldEnd, number> = { seated: 0, rejected: 0, request_ended: 0 };
  const pauseDurations = createDurations();
  const holdDurations = createDurations();
  const evidence = createEvidenceRecorder();
  const recent: ShadowDecision[] = [];
  let holdObservations: HoldObservation[] = [];
  let pauseObservations: number[] = [];
  let events = 0;
  let errors = 0;
  let pauses = 0;
  let held = 0;
  let trafficChanges = 0;
  let firstChange: ShadowDecision | null = null;
  /** What the router did with each live request: its backend, or null when it refused it. */
  const actual = new Map<string, string | null>();
  /** Requests the shadow holds, and since when (event time). */
  const heldSince = new Map<string, number>();

  function failed(stage: string, err: unknown, kind?: string): void {
    errors++;
    if (errors <= ERRORS_LOGGED || errors % ERRORS_LOG_EVERY === 0) {
      logger.error("shadow failed; the router goes on as before", {
        stage,
        ...(kind === undefined ? {} : { kind }),
        errors,
        err,
      });
    }
  }

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

  /** The shadow core's own lines: what it says of the config and the backends, the router says too. */
  const quiet: Logger = {
    debug: () => {},
    info: () => {},
    warn: (msg, fields) => logger.debug(`shadow core: ${msg}`, fields),
    error: (msg, fields) => logger.debug(`shadow core: ${msg}`, fields),
    child: () => quiet,
  };

  let loop: RunLoop | null = null;
  try {
    const build = options.createScheduler ?? createScheduler;
    const recorder = createDecisionRecorder(() => loop as RunLoop, record);
    loop = createRunLoop({
      logger: quiet,
      hooks: guardHooks(recorder, (err) => failed("decision", err)),
      onSchedulerError: (event, err) => failed("event", err, event.kind),
      createScheduler: (effects) =>
        build({
          config: { ...options.config, mode: "tr" },
          backends: options.backends,
          effects,
        }),
    });
  } catch (err) {
    // A shadow that cannot start watches nothing; the router starts all the same.
    loop = null;
    failed("start", err);
  }

  function observe(e: SchedulerEvent): void {
    events++;
    try {
      evidence.observe(e);
    } catch (err) {
      failed("evidence", err, e.kind);
    }
    try {
      if (loop === null) return;
      // The shadow's own table of requests, so that its effects apply as the router's would.
      if (e.kind === "request_arrived" && loop.requests.get(e.requestId) === undefined)
        loop.requests.open(e.requestId);
      loop.send(e);
      if (e.kind === "request_finished") {
        // Still held when the request really ended: it waited at least this long under tr.
        const since = heldSince.get(e.requestId);
        if (since !== undefined) endHold(e.requestId, "request_ended", e.now - since);
      }
    } catch (err) {
      failed("event", err, e.kind);
    } finally {
      // Whatever the shadow core did with it, an ended request is forgotten: a core that
      // failed to start or throws must not keep one entry per request the router served.
      if (e.kind === "request_finished") forget(e.requestId);
    }
  }

  function forget(requestId: string): void {
    actual.delete(requestId);
    heldSince.delete(requestId);
    loop?.requests.close(requestId);
  }

  const hooks: RunLoopHooks = {
    onDispatch(requestId, grant) {
      actual.set(requestId, grant.backendId);
    },
    onReject(requestId) {
      actual.set(requestId, null);
    },
    onEvent: observe,
  };

  /** The shadow core's view now; null when it has none or it failed. */
  function snapshot(): SchedulerSnapshot | null {
    try {
      return loop?.scheduler.snapshot() ?? null;
    } catch (err) {
      failed("snapshot", err);
      return null;
    }
  }

  /** The longest pause still going on, by the shadow core's own clock (ms). */
  function longestPause(snap: SchedulerSnapshot | null): number | null {
    if (snap === null) return null;
    let longest: number | null = null;
    for (const p of snap.programs)
      if (p.pausedSince !== null) longest = Math.max(longest ?? 0, snap.now - p.pausedSince);
    return longest;
  }

  function longestHold(now: number): number | null {
    let longest: number | null = null;
    for (const since of heldSince.values()) longest = Math.max(longest ?? 0, now - since);
    return longest;
  }

  function gauges(snap = snapshot()) {
    return {
      pausedPrograms: snap?.pausedPrograms ?? null,
      heldRequests: snap?.queueLength ?? null,
    };
  }

  return {
    hooks,
    nextDeadline() {
      try {
        return loop?.scheduler.nextDeadline() ?? null;
      } catch (err) {
        failed("deadline", err);
        return null;
      }
    },
    summary() {
      const snap = snapshot();
      const g = gauges(snap);
      const now = options.now();
      return {
        since,
        now,
        events,
        errors,
        decisions: { ...decisions },
        firstChange,
        paused: {
          now: g.pausedPrograms,
          longestNowMs: longestPause(snap),
          pauses,
          durations: pauseDurations.view(),
        },
        held: {
          now: g.heldRequests,
          longestNowMs: longestHold(now),
          held,
          ends: { ...holdEnds },
          durations: holdDurations.view(),
        },
        seats: { ...seats },
        engines: evidence.view(),
        recent: [...recent],
      };
    },
    counts: () => ({
      decisions: { ...decisions },
      seatsElsewhere: seats.elsewhere,
      trafficChanges,
      errors,
      overflowTicks: evidence.view().overflowTicks,
    }),
    gauges: () => gauges(),
    followed: () => actual.size + heldSince.size + (loop?.requests.size ?? 0),
    drainHoldObservations() {
      if (holdObservations.length === 0) return NOTHING;
      const list = holdObservations;
      holdObservations = [];
      return list;
    },
    drainPauseObservations() {
      if (pauseObservations.length === 0) return NOTHING;
      const list = pauseObservations;
      pauseObservations = [];
      return list;
    },
    get scheduler() {
      return loop?.scheduler ?? null;
    },
  };
}

/** Hooks whose failures are reported to `onError` instead of thrown into the loop running them. */
function guardHooks(hooks: RunLoopHooks, onError: (err: unknown) => void): RunLoopHooks {
  const guard =
    <A extends unknown[]>(fn: ((...args: A) => void) | undefined) =>
    (...args: A) => {
      try {
        fn?.(...args);
      } catch (err) {
        onError(err);
      }
    };
  return {
    onDispatch: guard(hooks.onDispatch),
    onReject: guard(hooks.onReject),
    onEvent: guard(hooks.onEvent),
    onLog: guard(hooks.onLog),
  };
}
