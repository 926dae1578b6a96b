/**
 * The router's composition root: builds every part from a validated RouterConfig and wires
 * them. `createRouter` builds the router without a server of its own, for embedding in
 * another one (the package's entry, src/index.ts); `startRouter` is that router with its own
 * HTTP server, as `maitred serve` runs it, and the programmatic entry for tests, benchmarks
 * and the simulator: it returns the URL and a graceful `close()`. What runs once built lives
 * beside it: the deadline timer and the tick rounds in src/runtime, the start, stop and drain
 * in router-lifecycle.ts, the router's own server in router-server.ts.
 */

import { valueFor } from "../config/backends-setting.ts";
import type { RouterConfig } from "../config/router-config.ts";
import { schedulerConfigOf } from "../config/scheduler-settings.ts";
import { describeBounds } from "../config/tail-preset.ts";
import type { BackendSpec } from "../core/api.ts";
import type { BackendMetricsSample } from "../core/events.ts";
import { createScheduler } from "../core/scheduler.ts";
import { createStepProfiler } from "../metrics/step-profiler.ts";
import { createBodyBudget, defaultBodyBudgetBytes } from "../proxy/body-budget.ts";
import { createCallerResolver } from "../proxy/caller.ts";
import { createApp } from "../proxy/create-app.ts";
import { createBudgetResolver } from "../proxy/program-budget.ts";
import { createClassResolver } from "../proxy/request-class.ts";
import { createResponseHomes } from "../proxy/response-homes.ts";
import { type Clock, wallClock } from "../runtime/clock.ts";
import { createDeadlineTimer } from "../runtime/deadline-timer.ts";
import { createInflightTracker } from "../runtime/inflight-tracker.ts";
import { combineHooks, createRunLoop } from "../runtime/run-loop.ts";
import { createTickRounds } from "../runtime/tick-rounds.ts";
import { createShadow, type Shadow } from "../shadow/shadow.ts";
import { createUiFeed } from "../ui/ui-feed.ts";
import { createLogger, type Logger } from "../util/logger.ts";
import { createBackendAccess } from "./backend-access.ts";
import { prioritiesInForce } from "./priorities-in-force.ts";
import type {
  CreateRouterOptions,
  Router,
  RouterHandle,
  StartRouterOptions,
} from "./router-api.ts";
import {
  createRouterLifecycle,
  createRouterPhase,
  logStart,
  type RouterLifecycle,
  type RouterPhase,
} from "./router-lifecycle.ts";
import { createRouterObservers } from "./router-observers.ts";
import {
  createRouterServer,
  lazyListener,
  listenError,
  nodeFetch,
  urlOf,
} from "./router-server.ts";
import { startSimBackends } from "./sim-backends.ts";

export type {
  CreateRouterOptions,
  LogBufferStats,
  Router,
  RouterApp,
  RouterHandle,
  StartRouterOptions,
} from "./router-api.ts";

/** The router, and what `startRouter` needs around its own server. */
interface Assembly {
  router: Router;
  lifecycle: RouterLifecycle;
  phase: RouterPhase;
  /** The start-up lines of the log; `url` when the router has a port of its own. */
  logStarted(url: string | null): void;
}

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

  // `rounds` is declared below with the ticker; late answers only come once it runs.
  const onLate = (id: string, sample: BackendMetricsSample) => rounds.deliverLate(id, sample);
  const { upstreams, poller } = createBackendAccess(config, backends, clock, logger, onLate);

  const schedulerConfig = schedulerConfigOf(config);
  const specs = backends.map((id): BackendSpec => {
    // The operator's word first; a simulated backend started here declares its own engine.
    const polarity = valueFor(config.enginePriority, id) ?? sims?.priority[id];
    return {
      id,
      type: config.backendType,
      ...(polarity === undefined ? {} : { priorityScheduling: polarity }),
    };
  });
  // `--shadow`: requests are routed as the default router routes them, while a tr core beside
  // it hears every event and records what it would have done (src/shadow/shadow.ts). With
  // `--router default --shadow` too: the shadow is always tr, the one mode that holds and
  // pauses, so both spellings mean "route as default, watch tr".
  const mode = config.shadow ? "default" : config.router;
  // Read by the live page, the proxy and the metrics from their first request on.
  const phase = createRouterPhase();
  const shadow: Shadow | null = config.shadow
    ? createShadow({
        config: schedulerConfig,
        backends: specs,
        logger,
        now: () => clock.now(),
        // A request it holds may bring a deadline (its max wait) before the armed one.
        onHeld: () => deadline.armIfEarlier(),
      })
    : null;
  // The live page's feed; it reads the scheduler through `loop`, which exists by its first use.
  const ui = createUiFeed({
    clock,
    snapshot: () => loop.scheduler.snapshot(),
    holds: () => loop.scheduler.holds(),
    isDraining: () => phase.current() !== "serving",
    ...(shadow === null ? {} : { shadow: () => shadow.summary() }),
  });
  const build = options.createScheduler ?? createScheduler;
  const loop = createRunLoop({
    logger,
    // The shadow first: it has seen each event by the time a caller's hook hears of it. Then
    // the waits both cores observed in the event go to the metrics (`waits`, made with them
    // below), before a caller hears of it.
    hooks: combineHooks(
      shadow?.hooks,
      { onEvent: (event) => waits.onEvent?.(event) },
      options.hooks,
      ui.hooks,
    ),
    // `metrics` is made below; events only arrive once the service has started.
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
  const { metrics, waits } = createRouterObservers({
    scheduler: loop.scheduler,
    shadow,
    priorities,
    latestSample: (id) => poller.latest(id)?.sample,
    cell: config.cell,
    phase,
    processMetrics: options.processMetrics === true,
    responseHomes: () => responseHomes.size,
    ...(options.logBuffer === undefined ? {} : { logBuffer: options.logBuffer }),
  });
  const profiler = config.profile ? createStepProfiler({ dir: config.profileDir, logger }) : null;
  const inflight = createInflightTracker();
  let requestSeq = 0;

  const deadline = createDeadlineTimer({
    clock,
    // The earlier of the core's next deadline and its shadow's: one timer ticks for both. The
    // default core a shadow runs beside acts in a tick only on timeouts already due, so a tick
    // at the shadow's deadline changes nothing for it.
    nextDeadline() {
      const own = loop.scheduler.nextDeadline?.() ?? null;
      const watcher = shadow?.nextDeadline() ?? null;
      return own === null ? watcher : watcher === null ? own : Math.min(own, watcher);
    },
    tick: (now) => loop.send({ kind: "tick", now, metrics: {} }),
    isStopping: () => phase.stopping,
  });
  const rounds = createTickRounds({
    clock,
    logger,
    intervalMs: config.schedulerIntervalMs,
    pollTimeoutMs: config.pollTimeoutMs,
    // `--metrics`: fresher engine figures for /backends and /metrics between scheduler ticks.
    engineIntervalMs: config.metrics ? config.metricsIntervalMs : null,
    pollRound: (waitMs, counted) => poller.pollRound(waitMs, counted),
    send: (event) => loop.send(event),
    isStopping: () => phase.stopping,
    onTicked: () => deadline.arm(),
    onRound: (pollMs) => metrics.tick(pollMs / 1000),
    onError: () => metrics.schedulerError("tick"),
  });

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
    onParked: () => deadline.armIfEarlier(),
    isStopping: () => phase.stopping,
    phase: () => phase.current(),
    cell: config.cell,
    latestSample: (id) => poller.latest(id),
    bounds: mode === "tr" ? config : null,
    accessLog: config.accessLog === "on",
    ui,
    shadow,
    responseHomes,
  });

  const logStarted = (url: string | null) =>
    logStart(logger, url, {
      mode,
      backends,
      bounds: describeBounds(config),
      shadow: shadow !== null,
      adminToken: config.adminToken !== null,
    });

  const lifecycle = createRouterLifecycle({
    clock,
    logger,
    phase,
    signal: options.signal,
    pollTimeoutMs: config.pollTimeoutMs,
    shutdownGraceMs: config.shutdownGraceMs,
    drainMs: config.drainMs,
    poller,
    rounds,
    deadline,
    loop,
    inflight,
    ui,
    async release() {
      await upstreams.close();
      await profiler?.close();
      await sims?.close();
    },
    announce: logStarted,
  });

  const listener = lazyListener(app);
  const router: Router = {
    app,
    fetch: nodeFetch(app),
    get listener() {
      return listener();
    },
    backends,
    loop,
    ticker: rounds.ticker,
    poller,
    metrics,
    start: lifecycle.start,
    close: lifecycle.close,
    drain: lifecycle.drain,
  };
  return { router, lifecycle, phase, logStarted };
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

/** The router on a port of its own (`maitred serve`): started, listening, with its URL. */
export async function startRouter(
  config: RouterConfig,
  options: StartRouterOptions = {},
): Promise<RouterHandle> {
  const { router, lifecycle, phase, logStarted } = await assemble(config, options);
  const server = createRouterServer(router.app, () => phase.stopping);
  lifecycle.attachServer(server.part);
  // The first tick runs before the port opens (router-lifecycle.ts, `firstTick`).
  await lifecycle.firstTick();
  let port: number;
  try {
    options.signal?.throwIfAborted();
    port = await server.listen(config.port, config.host);
  } catch (err) {
    // Stopped, or the port is taken (or not ours): leave nothing running behind the error.
    await lifecycle.abandon();
    throw listenError(err, config.host, config.port);
  }
  const url = urlOf(config.host, port);
  lifecycle.startRest();
  logStarted(url);
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
