/**
 * The router's composition root: builds every part from a validated RouterConfig and wires
 * them. `createRouter` builds the router without a server of its own, for embedding in
 * another one (the package's entry, src/index.ts); `startRouter` is that router with its own
 * HTTP server, as `maitred serve` runs it, and the programmatic entry for tests, benchmarks
 * and the simulator: it returns the URL and a graceful `close()`.
 */
import { once } from "node:events";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer, getRequestListener, type HttpBindings } from "@hono/node-server";
import { type BackendPoller, createBackendPoller } from "../backends/backend-poller.ts";
import { type BackendMetricsClient, withHostKvTokens } from "../backends/metrics-client.ts";
import { createSglangMetricsClient } from "../backends/sglang-metrics-client.ts";
import { createUpstreamPools, getText } from "../backends/upstream-pools.ts";
import { createVllmMetricsClient } from "../backends/vllm-metrics-client.ts";
import type { RouterConfig } from "../config/router-config.ts";
import { schedulerConfigOf } from "../config/scheduler-settings.ts";
import { describeBounds } from "../config/tail-preset.ts";
import type { CreateSchedulerOptions, Scheduler } from "../core/api.ts";
import type { BackendMetricsSample } from "../core/events.ts";
import { createScheduler } from "../core/scheduler.ts";
import { ConfigError, Errors } from "../errors.ts";
import { createRouterMetrics, type RouterMetrics } from "../metrics/router-metrics.ts";
import { createShadowMetrics } from "../metrics/shadow-metrics.ts";
import { createStepProfiler } from "../metrics/step-profiler.ts";
import { takesNewPrograms } from "../proxy/admin-views.ts";
import { createBodyBudget, defaultBodyBudgetBytes } from "../proxy/body-budget.ts";
import { createCallerResolver } from "../proxy/caller.ts";
import { answerClientError, refuseExpectation } from "../proxy/client-error.ts";
import { createApp } from "../proxy/create-app.ts";
import { createBudgetResolver } from "../proxy/program-budget.ts";
import type { CellPhase } from "../proxy/proxy-deps.ts";
import { createClassResolver } from "../proxy/request-class.ts";
import { createResponseHomes } from "../proxy/response-homes.ts";
import { type Clock, type TimerHandle, wallClock } from "../runtime/clock.ts";
import { createInflightTracker } from "../runtime/inflight-tracker.ts";
import {
  combineHooks,
  createRunLoop,
  type RunLoop,
  type RunLoopHooks,
} from "../runtime/run-loop.ts";
import { createTicker, type Ticker } from "../runtime/ticker.ts";
import { createShadow, type Shadow } from "../shadow/shadow.ts";
import { createUiFeed } from "../ui/ui-feed.ts";
import { type BatchedLines, createLogger, type Logger } from "../util/logger.ts";
import { prioritiesInForce } from "./priorities-in-force.ts";
import { startSimBackends } from "./sim-backends.ts";

export interface CreateRouterOptions {
  logger?: Logger;
  clock?: Clock;
  /** Replace the scheduler core (tests of the runtime against a fake). */
  createScheduler?: (options: CreateSchedulerOptions) => Scheduler;
  hooks?: RunLoopHooks;
  /**
   * Aborting it during start-up (a SIGTERM while the first tick waits for slow backends) stops
   * the start: everything begun is closed and `startRouter` (or the router's `start()`)
   * rejects with the signal's reason.
   */
  signal?: AbortSignal;
  /**
   * Export the process's own figures on /metrics too, under prom-client's standard names
   * (`process_resident_memory_bytes`, `nodejs_heap_size_used_bytes`,
   * `nodejs_eventloop_lag_p99_seconds`, …). On in `maitred serve`, whose process is the router;
   * off by default, since a router embedded in a program of the caller's shares its process,
   * whose figures are that program's to export.
   */
  processMetrics?: boolean;
  /**
   * The log's write buffer, when the caller writes the router's log through a bounded one
   * (`maitred serve`'s stderr, src/util/logger.ts `batchedLines`): its size and the lines it
   * dropped are exported on /metrics.
   */
  logBuffer?: LogBufferStats;
}

export type StartRouterOptions = CreateRouterOptions;

/** The router's HTTP surface: every route of `maitred serve`, answered on Node's own objects. */
export type RouterApp = ReturnType<typeof createApp>;

/**
 * The router without a server: everything `maitred serve` runs, to be mounted in an HTTP
 * server of the caller's. `start()` starts it and `close()` stops it; the server stays the
 * caller's to open and close.
 */
export interface Router {
  /**
   * The Hono app: mount it in a Hono app (`app.route("/llm", router.app)`) served by
   * @hono/node-server. Its completions are written to Node's response itself, so it only runs
   * on Node's HTTP server, never on a bare `Request`.
   */
  readonly app: RouterApp;
  /**
   * The app's `fetch`, for @hono/node-server (`serve`, `getRequestListener`) or Hono's
   * `mount`: it needs Node's request and response as its second argument, and throws without.
   */
  readonly fetch: (request: Request, env?: unknown) => Response | Promise<Response>;
  /** A `node:http` request listener: `createServer(router.listener)`, or a mounted handler. */
  readonly listener: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** Backend URLs in use (the started simulated ones for `sim:N`). */
  readonly backends: string[];
  /** The scheduler core behind its run loop (`loop.scheduler.snapshot()` reads it). */
  readonly loop: RunLoop;
  readonly ticker: Ticker;
  /** The freshest engine figures per backend. */
  readonly poller: Pick<BackendPoller, "latest">;
  /** The Prometheus metrics (also at the app's `/metrics`) and their prom-client registry. */
  readonly metrics: Pick<RouterMetrics, "registry" | "contentType" | "render">;
  /**
   * The first scheduler tick (waiting for every backend's figures, up to the poll timeout),
   * then the periodic ones: until it, the router knows no backend's capacity, so it is called
   * before the server takes requests. Calling it again returns the same promise; a router
   * closed before it started rejects.
   */
  start(): Promise<void>;
  /** Graceful stop: refuse new requests, 503 the parked, let streams finish (bounded). */
  close(): Promise<void>;
  /**
   * What SIGTERM does: for up to `--drain`, refuse new programs (503, /health 503) while the
   * programs the router has go on, ending sooner once nothing is in flight; then `close()`.
   */
  drain(): Promise<void>;
}

export interface RouterHandle {
  url: string;
  port: number;
  /** Backend URLs in use (the started simulated ones for `sim:N`). */
  backends: string[];
  loop: RunLoop;
  ticker: Ticker;
  /** Graceful stop: refuse new requests, 503 the parked, let streams finish (bounded). */
  close(): Promise<void>;
  /**
   * What SIGTERM does: for up to `--drain`, refuse new programs (503, /health 503) while the
   * programs the router has go on, ending sooner once nothing is in flight; then `close()`.
   */
  drain(): Promise<void>;
}

/** Retry delay for a deadline that is already due but still reported (spin guard). */
const MIN_DEADLINE_RETRY_MS = 1000;
/**
 * How long a tick waits for the backends' metrics, as a share of the scheduler interval (and
 * never past the poll timeout): a `/metrics` answers in milliseconds, so a backend still silent
 * then is slow, and waiting longer would only age the others' figures.
 */
const ROUND_WAIT_SHARE = 0.25;

/** What the router's own HTTP server adds to the shutdown (`startRouter`). */
interface ServerPart {
  /** Shutdown began: stop taking connections. */
  stopAccepting(): void;
  /**
   * Every request has ended: let the last answers out, then close the connections, cutting
   * what is left when the grace period is over (`endGrace` cancels its in-flight cut).
   */
  settle(graceOver: Promise<void>, endGrace: () => void): Promise<void>;
}

/** The router, and the steps `startRouter` takes around its own server. */
interface Assembly {
  router: Router;
  /** The first tick, bounded by the poll timeout and the abort signal. */
  firstTick(): Promise<void>;
  /** After the first tick: the engine figures' ticker and the live page's feed. */
  startRest(): void;
  /** A start that failed before anything was served: stop what runs, close what is open. */
  abandon(): Promise<void>;
  attachServer(part: ServerPart): void;
  /** Shutdown began. */
  isStopping(): boolean;
  /** The start-up lines of the log; `url` when the router has a port of its own. */
  logStarted(url: string | null): void;
}

export type LogBufferStats = Pick<BatchedLines, "bufferedBytes" | "droppedLines">;

const NEEDS_NODE =
  "maitred's router answers on Node's own request and response: serve its fetch with @hono/node-server (serve, createAdaptorServer, getRequestListener) or use router.listener in a node:http server";

async function assemble(config: RouterConfig, options: CreateRouterOptions): Promise<Assembly> {
  const logger =
    options.logger ?? createLogger({ level: config.logLevel, fields: { cell: config.cell } });
  const clock = options.clock ?? wallClock;
  const sims =
    config.simBackends > 0
      ? await startSimBackends(config.simBackends, config.backendType, config.sim, logger, clock)
      : null;
  try {
    return assembleOn(config, options, logger, clock, sims);
  } catch (err) {
    // Nothing else runs yet (no tick, no socket): the simulated backends are all there is to
    // stop, and the caller has no handle to stop them.
    await sims?.close();
    throw err;
  }
}

function assembleOn(
  config: RouterConfig,
  options: CreateRouterOptions,
  logger: Logger,
  clock: Clock,
  sims: Awaited<ReturnType<typeof startSimBackends>> | null,
): Assembly {
  const backends = sims ? sims.urls : config.backends;

  const upstreams = createUpstreamPools({
    backends,
    connections: config.upstreamConnections,
    timeoutMs: config.upstreamTimeoutMs,
  });
  const clients: BackendMetricsClient[] = upstreams.all().map((u) => {
    const fetchText = (path: string, signal: AbortSignal) => getText(u, path, signal);
    const client =
      config.backendType === "sglang"
        ? createSglangMetricsClient(u.id, fetchText)
        : createVllmMetricsClient(u.id, fetchText, config.kvBytesPerToken);
    const hostTokens = config.hostKvTokens?.byBackend[u.id] ?? config.hostKvTokens?.all ?? null;
    return hostTokens === null ? client : withHostKvTokens(client, hostTokens);
  });
  const poller = createBackendPoller({
    clients,
    concurrency: config.pollConcurrency,
    timeoutMs: config.pollTimeoutMs,
    clock,
    logger,
    // `deliverLate` is declared below with the ticker; answers only come once it runs.
    onLate: (id, sample) => deliverLate(id, sample),
  });

  const schedulerConfig = schedulerConfigOf(config);
  const specs = backends.map((id) => ({ id, type: config.backendType }));
  // `--shadow`: requests are routed as the default router routes them, while a tr core beside
  // it hears every event and records what it would have done (src/shadow/shadow.ts). With
  // `--router default --shadow` too: the shadow is always tr, the one mode that holds and
  // pauses, so both spellings mean "route as default, watch tr".
  const mode = config.shadow ? "default" : config.router;
  const shadow: Shadow | null = config.shadow
    ? createShadow({
        config: schedulerConfig,
        backends: specs,
        logger,
        now: () => clock.now(),
        // A request it holds may bring a deadline (its max wait) before the armed one.
        onHeld() {
          if ((nextDeadline() ?? Number.POSITIVE_INFINITY) < armedAt) armDeadline();
        },
      })
    : null;
  // The live page's feed; it reads the scheduler through `loop`, which exists by its first use.
  const ui = createUiFeed({
    clock,
    snapshot: () => loop.scheduler.snapshot(),
    holds: () => loop.scheduler.holds(),
    isDraining: () => draining || refusingNew,
    ...(shadow === null ? {} : { shadow: () => shadow.summary() }),
  });
  const build = options.createScheduler ?? createScheduler;
  const loop = createRunLoop({
    logger,
    // The shadow first: it has seen each event by the time a caller's hook hears of it.
    hooks: combineHooks(shadow?.hooks, options.hooks, ui.hooks),
    // `metrics` is declared below; events only arrive once the service has started.
    onSchedulerError: () => metrics.schedulerError("event"),
    createScheduler: (effects) =>
      build({ config: { ...schedulerConfig, mode }, backends: specs, effects }),
  });
  // The adapters follow the core: if it fell back from a broken priority section (and logged
  // why), the router runs exactly as with priorities off.
  const priorities = prioritiesInForce(config, loop.scheduler, logger);
  // Where each relayed Responses API response is stored: the routes record and read it, the
  // metrics count it.
  const responseHomes = createResponseHomes();
  const metrics = createRouterMetrics({
    snapshot: () => loop.scheduler.snapshot(),
    pauseObservations: () => loop.scheduler.drainPauseObservations?.() ?? [],
    priority: priorities
      ? { queueWaitObservations: () => loop.scheduler.drainQueueWaitObservations?.() ?? [] }
      : undefined,
    latestSample: (id) => poller.latest(id)?.sample,
    cell: {
      name: config.cell,
      // The scrape's own snapshot: one per scrape, shared with every other series.
      takesNewPrograms: (snapshot) => takesNewPrograms(phase(), snapshot).takes,
    },
    process: options.processMetrics === true,
    sizes: { responseHomes: () => responseHomes.size },
    ...(options.logBuffer === undefined ? {} : { logBuffer: options.logBuffer }),
  });
  if (shadow !== null) createShadowMetrics({ registry: metrics.registry, shadow });
  const profiler = config.profile ? createStepProfiler({ dir: config.profileDir, logger }) : null;
  const inflight = createInflightTracker();
  /** Shutdown began: everything new is refused and the loop winds down. */
  let draining = false;
  /** SIGTERM's drain: new programs are refused, the router's own go on. */
  let refusingNew = false;
  let requestSeq = 0;
  const phase = (): CellPhase => (draining ? "stopping" : refusingNew ? "draining" : "serving");

  // A tick with no samples runs only the core's timeouts, resume and pause: used to act on a
  // deadline (forced resume, idle lease) that falls between two regular ticks.
  let deadlineTimer: TimerHandle | null = null;
  let armedAt = Number.POSITIVE_INFINITY;
  /** The deadline the last deadline tick was for. */
  let handledAt = Number.NEGATIVE_INFINITY;
  const cancelDeadline = () => {
    deadlineTimer?.cancel();
    deadlineTimer = null;
  };
  /**
   * The earlier of the core's next deadline and its shadow's: one timer ticks for both. The
   * default core a shadow runs beside acts in a tick only on timeouts already due, so a tick at
   * the shadow's deadline changes nothing for it.
   */
  const nextDeadline = (): number | null => {
    const own = loop.scheduler.nextDeadline?.() ?? null;
    const watcher = shadow?.nextDeadline() ?? null;
    return own === null ? watcher : watcher === null ? own : Math.min(own, watcher);
  };
  const armDeadline = () => {
    cancelDeadline();
    armedAt = Number.POSITIVE_INFINITY;
    const at = nextDeadline();
    if (at === null || draining) return;
    armedAt = at;
    // A deadline its own tick left standing is one the core chose not to act on yet (e.g. the
    // idle lease of a busy program): retrying at once would spin. Any other gets its tick when
    // due, at once if it is already (a request parked with a short max wait).
    const delay = at <= handledAt ? MIN_DEADLINE_RETRY_MS : Math.max(0, at - clock.now());
    deadlineTimer = clock.setTimeout(() => {
      deadlineTimer = null;
      handledAt = at;
      loop.send({ kind: "tick", now: clock.now(), metrics: {} });
      armDeadline();
    }, delay);
  };
  // A tick waits for the backends' answers, but a slow one only so long: its figures reach the
  // core on their own when they come (a tick of their own), and the others' are not held back.
  // The first tick waits for every backend up to the poll timeout, for their capacities.
  let roundWaitMs = config.pollTimeoutMs;
  const deliverLate = (id: string, sample: BackendMetricsSample) => {
    if (draining) return;
    try {
      loop.send({ kind: "tick", now: clock.now(), metrics: { [id]: sample } });
      armDeadline();
    } catch (err) {
      // Off the ticker's path, so caught here as the ticker catches its own: never a crash.
      logger.error("scheduler tick failed", { err });
      metrics.schedulerError("tick");
    }
  };
  const ticker = createTicker({
    clock,
    intervalMs: config.schedulerIntervalMs,
    poll: () => {
      const round = poller.pollRound(roundWaitMs, true);
      roundWaitMs = Math.min(config.pollTimeoutMs, config.schedulerIntervalMs * ROUND_WAIT_SHARE);
      return round;
    },
    onTick(samples, pollMs) {
      if (draining) return; // the round shutdown ended early: its figures come too late
      loop.send({ kind: "tick", now: clock.now(), metrics: samples });
      metrics.tick(pollMs / 1000);
      armDeadline();
    },
    onError: () => metrics.schedulerError("tick"),
    logger,
  });
  // `--metrics`: fresher engine figures for /backends and /metrics between scheduler ticks.
  const engineTicker = config.metrics
    ? createTicker({
        clock,
        intervalMs: config.metricsIntervalMs,
        poll: () => poller.pollRound(config.pollTimeoutMs, false),
        onTick() {},
        logger,
      })
    : null;

  const callers = createCallerResolver(config.priority);
  const app = createApp({
    loop,
    clock,
    upstreams,
    metrics,
    profiler,
    logger,
    inflight,
    identityOrder: config.identityOrder,
    priority: priorities ? createClassResolver(config.priority, callers) : null,
    callers,
    // A caller that names no tenant may be one that left its key or trusted header out.
    budgets: createBudgetResolver(
      config.budgets,
      Object.keys(config.priority.apiKeys).length > 0 || config.priority.trustTenantHeader,
    ),
    maxBodySize: config.maxBodySize,
    bodyBudget: createBodyBudget(config.maxBufferedBytes ?? defaultBodyBudgetBytes()),
    adminToken: config.adminToken,
    upstreamStream: config.upstreamStream,
    responseFlavour: config.backendType,
    progressIntervalTokens: config.progressIntervalTokens,
    holdKeepalive: config.holdKeepalive === "on",
    // The cell's name keeps ids apart when several routers' logs are read together.
    newRequestId: () => `${config.cell}-req-${(++requestSeq).toString(36)}`,
    // A parked request may bring a deadline (max pause, max wait) before the armed one.
    onParked() {
      if ((nextDeadline() ?? Number.POSITIVE_INFINITY) < armedAt) armDeadline();
    },
    isStopping: () => draining,
    phase,
    cell: config.cell,
    latestSample: (id) => poller.latest(id),
    bounds: mode === "tr" ? config : null,
    accessLog: config.accessLog === "on",
    ui,
    shadow,
    responseHomes,
  });

  // The first tick runs before the router serves, so the first request already meets every
  // backend's capacity and engine figures (as in `simulate`, whose first tick precedes any
  // arrival). Backends that do not answer cost one poll timeout at most, however many they
  // are: the router serves then, and the tick lands when it is done.
  async function firstTick(): Promise<void> {
    let giveUp = () => {};
    const bound = clock.setTimeout(() => giveUp(), config.pollTimeoutMs);
    const onAbort = () => giveUp();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    await Promise.race([ticker.start(), new Promise<void>((resolve) => (giveUp = resolve))]);
    bound.cancel();
    // A signal that outlives this router must not keep it alive through the listener.
    options.signal?.removeEventListener("abort", onAbort);
  }
  function startRest(): void {
    void engineTicker?.start();
    ui.start();
  }
  async function abandon(): Promise<void> {
    poller.close();
    await ticker.stop();
    cancelDeadline();
    await upstreams.close();
    await profiler?.close();
    await sims?.close();
  }
  function logStarted(url: string | null): void {
    logger.info(url === null ? "maitred started" : "maitred listening", {
      ...(url === null ? {} : { url }),
      // `cell` is on every line already (the logger's own field), so not again here.
      mode,
      backends,
      // The default router never pauses, so it has no bounds on waiting to state.
      ...(mode === "tr" ? { bounds: describeBounds(config) } : {}),
      // Its decisions are recorded, never carried out: GET /shadow.
      ...(shadow === null ? {} : { shadow: "tr", shadowBounds: describeBounds(config) }),
    });
    logger.info(
      config.adminToken === null
        ? "admin routes (/programs, /backends, /profiles, /ui) answer loopback clients only; set --admin-token to reach them from elsewhere"
        : "admin routes (/programs, /backends, /profiles, /ui) need the admin token",
    );
  }

  let server: ServerPart | null = null;
  let closing: Promise<void> | null = null;
  async function shutdown(): Promise<void> {
    draining = true;
    // Polls still out are aborted: their figures would reach a core that is shutting down.
    poller.close();
    ui.stop();
    const pollsEnded = Promise.all([ticker.stop(), engineTicker?.stop()]);
    cancelDeadline();
    server?.stopAccepting();
    loop.send({ kind: "shutdown", now: clock.now() });
    const grace = clock.setTimeout(() => {
      logger.warn("shutdown grace over; cancelling in-flight requests", {
        inFlight: inflight.size,
      });
      for (const id of [...loop.requests.ids()]) loop.requests.cancel(id, Errors.shuttingDown());
    }, config.shutdownGraceMs);
    await inflight.whenIdle();
    const graceOver = new Promise<void>((resolve) =>
      clock.setTimeout(resolve, config.shutdownGraceMs),
    );
    // Embedded, the connections are the host server's: every request has ended, and the last
    // bytes of their answers go out through it.
    if (server === null) grace.cancel();
    else await server.settle(graceOver, () => grace.cancel());
    await Promise.race([pollsEnded, graceOver]);
    await upstreams.close();
    await profiler?.close();
    await sims?.close();
    logger.info("maitred stopped");
  }
  function close(): Promise<void> {
    closing ??= shutdown();
    return closing;
  }
  let drained: Promise<void> | null = null;
  async function drainThenClose(): Promise<void> {
    if (closing === null && config.drainMs > 0) {
      refusingNew = true;
      logger.info("draining: new programs are refused, the router's own go on", {
        inFlight: inflight.size,
        drainSeconds: config.drainMs / 1000,
      });
      let timer: TimerHandle | null = null;
      await Promise.race([
        inflight.whenIdle(),
        new Promise<void>((resolve) => {
          timer = clock.setTimeout(resolve, config.drainMs);
        }),
      ]);
      (timer as TimerHandle | null)?.cancel();
    }
    return close();
  }

  let started: Promise<void> | null = null;
  async function start(): Promise<void> {
    if (draining) throw new Error("the router was closed before it started");
    await firstTick();
    if (options.signal?.aborted) {
      await close();
      options.signal.throwIfAborted();
    }
    // Closed while the first tick ran: nothing more is started.
    if (draining) return;
    startRest();
    logStarted(null);
  }
  let listener: Router["listener"] | null = null;
  const router: Router = {
    app,
    fetch(request, env) {
      const node = env as Partial<HttpBindings> | undefined;
      if (node?.incoming === undefined || node.outgoing === undefined)
        throw new TypeError(NEEDS_NODE);
      return app.fetch(request, env as HttpBindings);
    },
    // Made on first use: @hono/node-server's listener replaces the global Request and Response
    // with its own when it is made, which a router mounted in a Hono app has no need of.
    get listener() {
      // An HTTP/1.0 request may come without a Host header (health checkers send them so); the
      // adapter builds each request's URL from it, and would refuse one without it.
      listener ??= getRequestListener(app.fetch, { hostname: "localhost" });
      return listener;
    },
    backends,
    loop,
    ticker,
    poller,
    metrics,
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
  return {
    router,
    firstTick,
    startRest,
    abandon,
    attachServer(part) {
      server = part;
    },
    isStopping: () => draining,
    logStarted,
  };
}

/**
 * The router, built and not yet started: mount `app`, `fetch` or `listener` in a server, call
 * `start()`, and `close()` it before that server closes.
 */
export async function createRouter(
  config: RouterConfig,
  options: CreateRouterOptions = {},
): Promise<Router> {
  return (await assemble(config, options)).router;
}

/** Why a listen fails that the operator can fix, in the words of the setting that causes it. */
const LISTEN_FAULTS: Record<string, string> = {
  EADDRINUSE:
    "the address is already in use (another process listens there; pick another --port or stop it)",
  EACCES: "permission denied: ports below 1024 need privileges; pick a higher --port",
  EADDRNOTAVAIL: "no such address on this machine; check --host",
};

/** A listen failure the operator can fix is a configuration error (one line, exit 2). */
function listenError(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const why = code === undefined ? undefined : LISTEN_FAULTS[code];
  if (why === undefined) return err;
  return new ConfigError("port", `cannot listen on ${host}:${port} (${code}): ${why}`);
}

/** The router on a port of its own (`maitred serve`): started, listening, with its URL. */
export async function startRouter(
  config: RouterConfig,
  options: StartRouterOptions = {},
): Promise<RouterHandle> {
  const built = await assemble(config, options);
  const { router } = built;
  // An HTTP/1.0 request may come without a Host header (health checkers send them so); the
  // adapter builds each request's URL from it, and would refuse one without it.
  const server = createAdaptorServer({ fetch: router.app.fetch, hostname: "localhost" }) as Server;
  server.on("clientError", answerClientError);
  server.on("checkExpectation", refuseExpectation);
  // Responses not yet complete, so shutdown can wait for the last bytes (not only for the
  // request's end) before closing connections. Requests that come in on kept-alive
  // connections after shutdown began get their 503 and then the connection closes.
  const openResponses = new Set<ServerResponse>();
  server.prependListener("request", (_req, res) => {
    if (built.isStopping()) res.shouldKeepAlive = false;
    openResponses.add(res);
    res.once("close", () => openResponses.delete(res));
  });
  let serverClosed: Promise<void> = Promise.resolve();
  built.attachServer({
    stopAccepting() {
      serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
    },
    async settle(graceOver, endGrace) {
      // The last answers (503s to parked requests, stream tails) may still be on their way out;
      // once every response is complete, kept-alive connections are idle and can be closed.
      // Whatever is left when the grace period ends is cut.
      await Promise.race([Promise.all([...openResponses].map((r) => once(r, "close"))), graceOver]);
      server.closeIdleConnections();
      await Promise.race([serverClosed, graceOver]);
      endGrace();
      server.closeAllConnections();
      await serverClosed;
    },
  });
  // The first tick runs before the port opens (see `firstTick`).
  await built.firstTick();
  try {
    options.signal?.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(config.port, config.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (err) {
    // Stopped, or the port is taken (or not ours): leave nothing running behind the error.
    await built.abandon();
    throw listenError(err, config.host, config.port);
  }
  const port = (server.address() as AddressInfo).port;
  const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  built.startRest();
  built.logStarted(url);
  return {
    url,
    port,
    backends: router.backends,
    loop: router.loop,
    ticker: router.ticker,
    close: router.close,
    drain: router.drain,
  };
}
