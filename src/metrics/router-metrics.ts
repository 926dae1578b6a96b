/**
 * Every Prometheus metric maitred exports, declared in this one file on one injected Registry.
 * Point-in-time values are gauges
 * whose `collect()` reads the scheduler snapshot taken once per scrape; decision counters are
 * synced from the core's monotonic counters; per-request figures are observed by the proxy,
 * and the core's waits (pauses, queue waits by class) by the runtime after the event that ended
 * them, so a scrape only reads and every scraper sees the same counts.
 * No label ever carries a program id: labels are backend URLs (configured, bounded), program
 * status/state, endpoint, outcome and error kind, and (priorities on) class.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import {
  BUDGET_KINDS,
  type QueueWaitObservation,
  type SchedulerCounters,
  type SchedulerSnapshot,
} from "../core/api.ts";
import { ENDED_ID_LIMIT, ENDED_ID_TTL_MS } from "../core/ended-ids.ts";
import type { BackendMetricsSample } from "../core/events.ts";
import { MAX_RESPONSE_HOMES } from "../proxy/response-homes.ts";
import { MAX_LOG_BUFFERED_BYTES } from "../util/logger.ts";
import { createPriorityMetrics, type PriorityMetrics } from "./priority-metrics.ts";
import { addProcessMetrics } from "./process-metrics.ts";
import { byLabel, single, syncedCounter } from "./synced-counter.ts";

export interface RouterMetricsOptions {
  snapshot(): SchedulerSnapshot;
  /** Freshest engine sample per backend, when the runtime has one newer than the core's. */
  latestSample?(backendId: string): BackendMetricsSample | undefined;
  /**
   * Priorities in force: true = the class metrics (priority-metrics.ts) are declared; absent or
   * false = none of them exist.
   */
  priority?: boolean;
  registry?: Registry;
  /**
   * `--cell`: the router's name as an info series (`maitred_cell_info{cell}`), the way
   * Prometheus joins a target to what it is, and whether it takes new programs now.
   */
  cell?: { name: string; takesNewPrograms(snapshot: SchedulerSnapshot): boolean };
  /**
   * Also export the process's figures under prom-client's standard names (RSS, CPU, heap,
   * event-loop delay, GC; src/metrics/process-metrics.ts): the only series not named
   * `maitred_*`. For a router that is the process (`maitred serve`); one embedded in another
   * server leaves them to its host.
   */
  process?: boolean;
  /** Sizes of the router's bounded memories outside the core, for their gauges. */
  sizes?: { responseHomes(): number };
  /** The log's write buffer (`maitred serve`'s stderr): bytes unread and lines dropped. */
  logBuffer?: { bufferedBytes(): number; droppedLines(): number };
}

export interface RouterMetrics {
  readonly registry: Registry;
  readonly contentType: string;
  /** Take one snapshot, then render every metric from it. */
  render(): Promise<string>;
  requestFinished(endpoint: string, outcome: string, seconds: number): void;
  firstToken(endpoint: string, seconds: number): void;
  upstreamError(kind: string): void;
  /** A request that failed on its backend before its first byte was tried on another. */
  upstreamRetry(): void;
  tick(seconds: number): void;
  /** A parked request was dispatched after `ms` held (the core's pause observation). */
  pauseObserved(ms: number): void;
  /** The same wait by the request's class; counted only while priorities are in force. */
  queueWaitObserved(observation: QueueWaitObservation): void;
  /** A failure the router survived: an event the core threw on, or a tick that threw. */
  schedulerError(stage: "event" | "tick"): void;
}

/** Pause durations span seconds to the 30-minute forced resume. */
const PAUSE_BUCKETS_S = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600];
/** vLLM's e2e latency buckets, so dashboards line up. */
const REQUEST_BUCKETS_S = [
  0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680,
];
/** vLLM's time-to-first-token buckets. */
const TTFT_BUCKETS_S = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80,
  160, 640, 2560,
];
/** A tick is one round of metric polls (10 s timeout each). */
const TICK_BUCKETS_S = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

const STATUSES = ["REASONING", "ACTING"] as const;
const STATES = ["ACTIVE", "PAUSED"] as const;

export function createRouterMetrics(options: RouterMetricsOptions): RouterMetrics {
  const registry = options.registry ?? new Registry();
  const registers = [registry];
  if (options.process === true) addProcessMetrics(registry);
  // One snapshot per scrape, whoever scrapes: `render()` or a host reading `registry` itself.
  // A scrape runs every metric's collect before it first waits, so the snapshot the first
  // collect takes is dropped as soon as they all have run, and the next scrape takes its own.
  let snap: SchedulerSnapshot | null = null;
  const current = () => {
    if (snap === null) {
      snap = options.snapshot();
      queueMicrotask(() => {
        snap = null;
      });
    }
    return snap;
  };

  new Gauge({
    name: "maitred_programs",
    help: "Programs by status (REASONING/ACTING) and state (ACTIVE/PAUSED).",
    labelNames: ["status", "state"],
    registers,
    collect() {
      const counts = new Map<string, number>();
      for (const p of current().programs) {
        const key = `${p.status}|${p.state}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      for (const status of STATUSES) {
        for (const state of STATES)
          this.set({ status, state }, counts.get(`${status}|${state}`) ?? 0);
      }
    },
  });

  const cell = options.cell;
  if (cell !== undefined) {
    new Gauge({
      name: "maitred_cell_info",
      help: "This router's --cell name (always 1); join on the scrape's instance label.",
      labelNames: ["cell"],
      registers,
    }).set({ cell: cell.name }, 1);
    new Gauge({
      name: "maitred_cell_takes_new_programs",
      help: "1 while this router takes new programs; 0 while it drains, stops or has no healthy backend (its /health answers 503).",
      registers,
      collect() {
        this.set(cell.takesNewPrograms(current()) ? 1 : 0);
      },
    });
  }

  const counterFrom = (name: string, help: string, key: keyof SchedulerCounters) =>
    syncedCounter({ registers, name, help, values: () => single(current().counters[key]) });
  counterFrom("maitred_pauses_total", "Programs paused by the scheduler.", "pauses");
  counterFrom(
    "maitred_marks_total",
    "REASONING programs marked to pause after their turn.",
    "marks",
  );
  counterFrom("maitred_resumes_total", "Paused programs resumed by the scheduler.", "resumes");
  counterFrom(
    "maitred_forced_resumes_total",
    "Programs force-resumed after --max-pause.",
    "forcedResumes",
  );
  counterFrom("maitred_releases_total", "Programs released (explicitly or as final).", "releases");
  counterFrom(
    "maitred_idle_releases_total",
    "Programs released after --idle-timeout.",
    "idleReleases",
  );
  counterFrom(
    "maitred_migrations_total",
    "Programs resumed on a backend other than their origin.",
    "migrations",
  );

  // The likely-done rule's decisions, from the core's counters (src/core/likely-done.ts).
  syncedCounter({
    registers,
    name: "maitred_likely_done_total",
    help: "Programs whose answer ended with no tool call: marked likely done, continued within --final-grace, released when it ended, and released ones that came back (released too early).",
    labelNames: ["outcome"],
    values: () => {
      const c = current().counters;
      return [
        [{ outcome: "marked" }, c.likelyDoneMarks],
        [{ outcome: "continued" }, c.likelyDoneContinued],
        [{ outcome: "released" }, c.likelyDoneReleases],
        [{ outcome: "came_back" }, c.likelyDoneReturns],
      ];
    },
  });
  syncedCounter({
    registers,
    name: "maitred_program_budgets_exhausted_total",
    help: "Programs ended because a request came past one of their budgets, by budget (steps, tokens, wall).",
    labelNames: ["kind"],
    values: () => byLabel("kind", BUDGET_KINDS, current().budgetsExhausted),
  });

  const pauseHist = new Histogram({
    name: "maitred_pause_duration_seconds",
    help: "How long requests of paused programs were held before dispatch.",
    buckets: PAUSE_BUCKETS_S,
    registers,
  });
  new Gauge({
    name: "maitred_queue_length",
    help: "Requests parked waiting for a resume or a first placement.",
    registers,
    collect() {
      this.set(current().queueLength);
    },
  });
  const requestHist = new Histogram({
    name: "maitred_request_duration_seconds",
    help: "Time from arrival at maitred to the end of the response, by endpoint and outcome.",
    labelNames: ["endpoint", "outcome"],
    buckets: REQUEST_BUCKETS_S,
    registers,
  });
  const ttftHist = new Histogram({
    name: "maitred_time_to_first_token_seconds",
    help: "Time from arrival at maitred to the first streamed token (pause time included).",
    labelNames: ["endpoint"],
    buckets: TTFT_BUCKETS_S,
    registers,
  });

  const perBackend = (
    name: string,
    help: string,
    pick: (b: SchedulerSnapshot["backends"][number]) => number | null,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ["backend"],
      registers,
      collect() {
        this.reset();
        for (const b of current().backends) {
          const v = pick(b);
          if (v !== null) this.set({ backend: b.id }, v);
        }
      },
    });
  const engine = (b: SchedulerSnapshot["backends"][number]) =>
    options.latestSample?.(b.id) ?? b.lastMetrics;
  perBackend(
    "maitred_backend_capacity_tokens",
    "KV capacity in tokens (engine truth).",
    (b) => b.capacityTokens,
  );
  perBackend(
    "maitred_backend_capacity_known",
    "1 when the engine reports its KV capacity; 0 = placed on by its engine's report alone (one program per sample while it queues nothing, never paused for room).",
    (b) => (b.capacityTokens === null ? 0 : 1),
  );
  perBackend(
    "maitred_backend_used_tokens",
    "Tokens the scheduler books on the backend (its belief: tokens plus learned headroom, lent room excluded).",
    (b) => b.usedTokens,
  );
  perBackend(
    "maitred_backend_admission_capacity_tokens",
    "What admission bounds the backend by: its GPU's KV, or where a pause costs a transfer from its host KV tier, what GPU and tier hold together.",
    (b) => b.admissionCapacityTokens,
  );
  perBackend(
    "maitred_backend_pause_transfer",
    "1 while a pause there costs a transfer from the engine's host KV tier (it holds every context), 0 while it costs a re-prefill.",
    (b) => (b.pausePrice === "transfer" ? 1 : 0),
  );
  perBackend(
    "maitred_backend_remaining_tokens",
    "Room admission uses: the belief corrected by the engine's truth (full while it waits or preempts).",
    (b) => b.remainingTokens,
  );
  perBackend(
    "maitred_backend_truth_room_tokens",
    "Room by the engine's last report (free KV less programs in a tool call, pending work and one step of growth); absent when unknown or full.",
    (b) => b.truth?.roomTokens ?? null,
  );
  perBackend(
    "maitred_backend_belief_gap_tokens",
    "Truth room minus belief room: positive when the books are more pessimistic than the engine; absent when unknown.",
    (b) => b.truth?.gapTokens ?? null,
  );
  perBackend(
    "maitred_backend_truth_full",
    "1 while the engine reports waiting requests or new preemptions (the backend counts as full); absent when unknown.",
    (b) => (b.truth === null ? null : b.truth.full ? 1 : 0),
  );
  perBackend(
    "maitred_backend_lent_programs",
    "Programs in a long tool call whose room is lent to waiting work.",
    (b) => b.lentPrograms,
  );
  perBackend("maitred_backend_healthy", "1 when the backend is healthy.", (b) =>
    b.healthy ? 1 : 0,
  );
  perBackend(
    "maitred_engine_kv_usage_ratio",
    "Engine KV-cache usage (0..1) as last polled.",
    (b) => engine(b)?.kvUsage ?? null,
  );
  perBackend(
    "maitred_engine_preemptions",
    "Engine preemption counter as last polled.",
    (b) => engine(b)?.preemptionsTotal ?? null,
  );
  perBackend(
    "maitred_engine_running_requests",
    "Engine running requests as last polled.",
    (b) => engine(b)?.running ?? null,
  );
  perBackend(
    "maitred_engine_waiting_requests",
    "Engine waiting requests as last polled.",
    (b) => engine(b)?.waiting ?? null,
  );

  const upstreamErrors = new Counter({
    name: "maitred_upstream_errors_total",
    help: "Backend failures by kind (unreachable, timeout, status, stream).",
    labelNames: ["kind"],
    registers,
  });
  const upstreamRetries = new Counter({
    name: "maitred_upstream_retries_total",
    help: "Requests tried again on another backend after theirs refused, reset or dropped them before the client received a byte.",
    registers,
  });
  const schedulerErrors = new Counter({
    name: "maitred_scheduler_errors_total",
    help: "Failures the router survived: an event the scheduler core threw on (the request, if any, got a 500), or a scheduler tick that threw (the next one runs as usual).",
    labelNames: ["stage"],
    registers,
  });
  for (const stage of ["event", "tick"]) schedulerErrors.inc({ stage }, 0);
  const tickHist = new Histogram({
    name: "maitred_tick_duration_seconds",
    help: "Duration of a scheduler tick's metric polls.",
    buckets: TICK_BUCKETS_S,
    registers,
  });

  // What the router remembers beyond its live programs and requests, each under a cap
  // (ended-ids.ts, response-homes.ts, logger.ts): a soak reads these to see them level off.
  new Gauge({
    name: "maitred_ended_programs_remembered",
    help: `Ids of programs the router ended on its own (budget, likely done, idle) that it remembers, to refuse a spent budget or carry a budget on return: at most ${ENDED_ID_LIMIT}, each for ${ENDED_ID_TTL_MS / 60_000} minutes, the oldest forgotten first.`,
    registers,
    collect() {
      this.set(current().endedPrograms);
    },
  });
  const sizes = options.sizes;
  if (sizes !== undefined) {
    new Gauge({
      name: "maitred_response_homes",
      help: `Responses API response ids whose backend the router remembers (for previous_response_id and /v1/responses/{id}): at most ${MAX_RESPONSE_HOMES}, the oldest forgotten first.`,
      registers,
      collect() {
        this.set(sizes.responseHomes());
      },
    });
  }
  const logBuffer = options.logBuffer;
  if (logBuffer !== undefined) {
    new Gauge({
      name: "maitred_log_buffered_bytes",
      help: `Log bytes written to stderr that its reader has not taken yet, held in memory; past ${MAX_LOG_BUFFERED_BYTES} new lines are dropped (maitred_log_lines_dropped_total).`,
      registers,
      collect() {
        this.set(logBuffer.bufferedBytes());
      },
    });
    syncedCounter({
      registers,
      name: "maitred_log_lines_dropped_total",
      help: `Log lines dropped because stderr's reader left more than ${MAX_LOG_BUFFERED_BYTES} bytes unread.`,
      values: () => single(logBuffer.droppedLines()),
    });
  }

  const priority: PriorityMetrics | null = options.priority
    ? createPriorityMetrics({ registers, current: () => current().priority })
    : null;

  return {
    registry,
    contentType: registry.contentType,
    render: () => registry.metrics(),
    requestFinished: (endpoint, outcome, seconds) =>
      requestHist.observe({ endpoint, outcome }, seconds),
    firstToken: (endpoint, seconds) => ttftHist.observe({ endpoint }, seconds),
    upstreamError: (kind) => upstreamErrors.inc({ kind }),
    upstreamRetry: () => upstreamRetries.inc(),
    tick: (seconds) => tickHist.observe(seconds),
    pauseObserved: (ms) => pauseHist.observe(ms / 1000),
    queueWaitObserved: (observation) => priority?.observeQueueWait(observation),
    schedulerError: (stage) => schedulerErrors.inc({ stage }),
  };
}
