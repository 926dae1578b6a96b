/**
 * The router's public shape, as the package exports it (src/index.ts): what `createRouter` and
 * `startRouter` take and return. Built by the composition root, service.ts.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { BackendPoller } from "../backends/backend-poller.ts";
import type { CreateSchedulerOptions, Scheduler } from "../core/api.ts";
import type { RouterMetrics } from "../metrics/router-metrics.ts";
import type { createApp } from "../proxy/create-app.ts";
import type { Clock } from "../runtime/clock.ts";
import type { RunLoop, RunLoopHooks } from "../runtime/run-loop.ts";
import type { Ticker } from "../runtime/ticker.ts";
import type { BatchedLines, Logger } from "../util/logger.ts";

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

export type LogBufferStats = Pick<BatchedLines, "bufferedBytes" | "droppedLines">;
