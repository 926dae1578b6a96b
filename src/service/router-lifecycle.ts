/**
 * The router's life after it is built: the first tick, the start of everything periodic, the
 * graceful stop, SIGTERM's drain, and the undoing of a start that failed. The parts it starts
 * and stops are built and connected by the composition root (service.ts); this module only
 * decides when each starts and stops, and in which order.
 */
import type { RouterMode } from "../core/api.ts";
import { Errors } from "../errors.ts";
import type { CellPhase } from "../proxy/proxy-deps.ts";
import type { Clock, TimerHandle } from "../runtime/clock.ts";
import type { DeadlineTimer } from "../runtime/deadline-timer.ts";
import type { InflightTracker } from "../runtime/inflight-tracker.ts";
import type { RunLoop } from "../runtime/run-loop.ts";
import type { TickRounds } from "../runtime/tick-rounds.ts";
import type { Logger } from "../util/logger.ts";

/**
 * Where the router is in its life, read by every part that answers differently while it
 * drains or stops (/health, the cell metrics, the live page, the proxy's refusals). Made before
 * those parts, since they read it from their first request; only the lifecycle moves it on.
 */
export interface RouterPhase {
  current(): CellPhase;
  /** Shutdown began: everything new is refused and the loop winds down. */
  readonly stopping: boolean;
  /** SIGTERM's drain: new programs are refused, the router's own go on. */
  readonly refusingNew: boolean;
}

/** The phase's two moves, made by the lifecycle alone. */
export interface RouterPhaseControl extends RouterPhase {
  stop(): void;
  refuseNew(): void;
}

class Phase implements RouterPhaseControl {
  #stopping = false;
  #refusingNew = false;
  get stopping(): boolean {
    return this.#stopping;
  }
  get refusingNew(): boolean {
    return this.#refusingNew;
  }
  current(): CellPhase {
    return this.#stopping ? "stopping" : this.#refusingNew ? "draining" : "serving";
  }
  stop(): void {
    this.#stopping = true;
  }
  refuseNew(): void {
    this.#refusingNew = true;
  }
}

export function createRouterPhase(): RouterPhaseControl {
  return new Phase();
}

/** What the router's own HTTP server adds to the shutdown (`startRouter`). */
export interface ServerPart {
  /** Shutdown began: stop taking connections. */
  stopAccepting(): void;
  /**
   * Every request has ended: let the last answers out, then close the connections, cutting
   * what is left when the grace period is over (`endGrace` cancels its in-flight cut).
   */
  settle(graceOver: Promise<void>, endGrace: () => void): Promise<void>;
}

export interface RouterLifecycleOptions {
  clock: Clock;
  logger: Logger;
  /** Made by `createRouterPhase`; the lifecycle is the only one to move it on. */
  phase: RouterPhaseControl;
  /** Aborted during start-up: the start stops and everything begun is closed. */
  signal?: AbortSignal;
  /** `--poll-timeout`, ms: the most the first tick waits for the backends. */
  pollTimeoutMs: number;
  /** `--shutdown-grace`, ms. */
  shutdownGraceMs: number;
  /** `--drain`, ms (0: SIGTERM closes at once). */
  drainMs: number;
  poller: { close(): void };
  rounds: Pick<TickRounds, "ticker" | "engineTicker" | "stop">;
  deadline: Pick<DeadlineTimer, "cancel">;
  loop: Pick<RunLoop, "send" | "requests">;
  inflight: Pick<InflightTracker, "size" | "whenIdle">;
  /** The live page's feed, which samples its history once started. */
  ui: { start(): void; stop(): void };
  /**
   * Closes what outlives the ticks and the requests, last of all: the upstream pools, the step
   * profiler, the simulated backends.
   */
  release(): Promise<void>;
  /** The start-up lines of the log; `url` when the router has a port of its own. */
  announce(url: string | null): void;
}

export interface RouterLifecycle {
  /** The first tick, bounded by the poll timeout and the abort signal. */
  firstTick(): Promise<void>;
  /** After the first tick: the engine figures' ticker and the live page's feed. */
  startRest(): void;
  /** A start that failed before anything was served: stop what runs, close what is open. */
  abandon(): Promise<void>;
  attachServer(part: ServerPart): void;
  /** The router's `start()`: the first tick, then the rest; the same promise every call. */
  start(): Promise<void>;
  /** The graceful stop; the same promise every call. */
  close(): Promise<void>;
  /** SIGTERM's drain, then `close()`; the same promise every call. */
  drain(): Promise<void>;
}

export function createRouterLifecycle(options: RouterLifecycleOptions): RouterLifecycle {
  const { clock, logger, signal, rounds, phase } = options;
  let server: ServerPart | null = null;
  let closing: Promise<void> | null = null;
  let drained: Promise<void> | null = null;
  let started: Promise<void> | null = null;

  // The first tick runs before the router serves, so the first request already meets every
  // backend's capacity and engine figures (as in `simulate`, whose first tick precedes any
  // arrival). Backends that do not answer cost one poll timeout at most, however many they
  // are: the router serves then, and the tick lands when it is done.
  async function firstTick(): Promise<void> {
    let giveUp = () => {};
    const bound = clock.setTimeout(() => giveUp(), options.pollTimeoutMs);
    const onAbort = () => giveUp();
    signal?.addEventListener("abort", onAbort, { once: true });
    await Promise.race([rounds.ticker.start(), new Promise<void>((resolve) => (giveUp = resolve))]);
    bound.cancel();
    // A signal that outlives this router must not keep it alive through the listener.
    signal?.removeEventListener("abort", onAbort);
  }

  function startRest(): void {
    void rounds.engineTicker?.start();
    options.ui.start();
  }

  async function abandon(): Promise<void> {
    options.poller.close();
    await rounds.ticker.stop();
    options.deadline.cancel();
    await options.release();
  }

  async function shutdown(): Promise<void> {
    phase.stop();
    // Polls still out are aborted: their figures would reach a core that is shutting down.
    options.poller.close();
    options.ui.stop();
    const pollsEnded = rounds.stop();
    options.deadline.cancel();
    server?.stopAccepting();
    const { loop, inflight } = options;
    loop.send({ kind: "shutdown", now: clock.now() });
    const grace = clock.setTimeout(() => {
      logger.warn("shutdown grace over; cancelling in-flight requests", {
        inFlight: inflight.size,
      });
      for (const id of [...loop.requests.ids()]) loop.requests.cancel(id, Errors.shuttingDown());
    }, options.shutdownGraceMs);
    await inflight.whenIdle();
    const graceOver = new Promise<void>((resolve) =>
      clock.setTimeout(resolve, options.shutdownGraceMs),
    );
    // Embedded, the connections are the host server's: every request has ended, and the last
    // bytes of their answers go out through it.
    if (server === null) grace.cancel();
    else await server.settle(graceOver, () => grace.cancel());
    await Promise.race([pollsEnded, graceOver]);
    await options.release();
    logger.info("maitred stopped");
  }

  function close(): Promise<void> {
    closing ??= shutdown();
    return closing;
  }

  async function drainThenClose(): Promise<void> {
    if (closing === null && options.drainMs > 0) {
      phase.refuseNew();
      logger.info("draining: new programs are refused, the router's own go on", {
        inFlight: options.inflight.size,
        drainSeconds: options.drainMs / 1000,
      });
      let timer: TimerHandle | null = null;
      await Promise.race([
        options.inflight.whenIdle(),
        new Promise<void>((resolve) => {
          timer = clock.setTimeout(resolve, options.drainMs);
        }),
      ]);
      (timer as TimerHandle | null)?.cancel();
    }
    return close();
  }

  async function start(): Promise<void> {
    if (phase.stopping) throw new Error("the router was closed before it started");
    await firstTick();
    if (signal?.aborted) {
      await close();
      signal.throwIfAborted();
    }
    // Closed while the first tick ran: nothing more is started.
    if (phase.stopping) return;
    startRest();
    options.announce(null);
  }

  return {
    firstTick,
    startRest,
    abandon,
    attachServer(part) {
      server = part;
    },
    start() {
      started ??= start();
      return started;
    },
    close,
    drain() {
      drained ??= drainThenClose();
      return drained;
    },
  };
}

/** What the start-up lines of the log say about the router. */
export interface StartFacts {
  mode: RouterMode;
  backends: readonly string[];
  /** The bounds on waiting (`--tail` and its parts), said for a router or shadow that pauses. */
  bounds: string;
  shadow: boolean;
  adminToken: boolean;
}

/** The start-up lines of the log; `url` when the router has a port of its own. */
export function logStart(logger: Logger, url: string | null, facts: StartFacts): void {
  logger.info(url === null ? "maitred started" : "maitred listening", {
    ...(url === null ? {} : { url }),
    // `cell` is on every line already (the logger's own field), so not again here.
    mode: facts.mode,
    backends: facts.backends,
    // The default router never pauses, so it has no bounds on waiting to state.
    ...(facts.mode === "tr" ? { bounds: facts.bounds } : {}),
    // Its decisions are recorded, never carried out: GET /shadow.
    ...(facts.shadow ? { shadow: "tr", shadowBounds: facts.bounds } : {}),
  });
  logger.info(
    facts.adminToken
      ? "admin routes (/programs, /backends, /profiles, /ui) need the admin token"
      : "admin routes (/programs, /backends, /profiles, /ui) answer loopback clients only; set --admin-token to reach them from elsewhere",
  );
}
