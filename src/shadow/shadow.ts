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
import { createDecisionRecorder, type DecisionKind } from "./decisions.ts";
import { createEvidenceRecorder, type EngineEvidence } from "./engine-evidence.ts";
import {
  createTally,
  type DurationView,
  type HoldEnd,
  type HoldObservation,
  type ShadowDecision,
} from "./tally.ts";

export { DECISION_KINDS, type Decision, type DecisionKind } from "./decisions.ts";
export type { EngineEvidence } from "./engine-evidence.ts";
export {
  type DurationView,
  HOLD_ENDS,
  type HoldEnd,
  type HoldObservation,
  type ShadowDecision,
} from "./tally.ts";

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

/**
 * Failures logged at error before the log goes quiet: a shadow that throws on every event would
 * otherwise write a line per request. Every one is counted; one line per this many after that.
 */
const ERRORS_LOGGED = 5;
const ERRORS_LOG_EVERY = 1000;

export function createShadow(options: ShadowOptions): Shadow {
  const { logger } = options;
  const since = options.now();
  const evidence = createEvidenceRecorder();
  const tally = createTally({ logger, onHeld: options.onHeld, onDecision: options.onDecision });
  const { actual, heldSince } = tally;
  let events = 0;
  let errors = 0;

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
    const recorder = createDecisionRecorder(() => loop as RunLoop, tally.record);
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
        if (since !== undefined) tally.endHold(e.requestId, "request_ended", e.now - since);
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
        decisions: tally.decisions(),
        firstChange: tally.firstChange(),
        paused: {
          now: g.pausedPrograms,
          longestNowMs: longestPause(snap),
          ...tally.paused(),
        },
        held: {
          now: g.heldRequests,
          longestNowMs: tally.longestHold(now),
          ...tally.held(),
        },
        seats: tally.seats(),
        engines: evidence.view(),
        recent: tally.recent(),
      };
    },
    counts: () => ({
      decisions: tally.decisions(),
      seatsElsewhere: tally.seatsElsewhere(),
      trafficChanges: tally.trafficChanges,
      errors,
      overflowTicks: evidence.view().overflowTicks,
    }),
    gauges: () => gauges(),
    followed: () => actual.size + heldSince.size + (loop?.requests.size ?? 0),
    drainHoldObservations: tally.drainHoldObservations,
    drainPauseObservations: tally.drainPauseObservations,
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
