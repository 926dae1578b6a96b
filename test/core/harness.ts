import type {
  BackendSpec,
  CoreScheduler,
  PriorityClass,
  ProgramBudget,
  SchedulerConfig,
} from "../../src/core/api.ts";
import type { Effects } from "../../src/core/effects.ts";
import type { BackendMetricsSample, RequestOutcome, Usage } from "../../src/core/events.ts";
import type { PriorityPolarity, SchedulerPolicies } from "../../src/core/records.ts";
import { createScheduler, DEFAULT_SCHEDULER_CONFIG } from "../../src/core/scheduler.ts";
import type { MaitredError } from "../../src/errors.ts";

/** Fake effects that record every call, a manual clock, and event helpers for core tests. */

export interface Dispatch {
  requestId: string;
  backendId: string;
  pausedMs: number;
  /** The engine order's value it carries (absent: its backend takes none). */
  priority?: number;
}
export interface Rejection {
  requestId: string;
  error: MaitredError;
}

export function sample(
  capacityTokens: number | null,
  extra: Partial<BackendMetricsSample> = {},
): BackendMetricsSample {
  return {
    capacityTokens,
    // Unknown unless a test says otherwise: the router then runs on its books alone.
    kvUsage: null,
    running: null,
    waiting: null,
    preemptionsTotal: 0,
    prefixCacheQueriesTotal: 0,
    prefixCacheHitsTotal: 0,
    promptTokensTotal: 0,
    generationTokensTotal: 0,
    ...extra,
  };
}

/**
 * The defaults with ThunderAgent's flat buffer, no resume ageing (nor a start bound for new
 * programs) and no lending of idle room:
 * most core tests check a mechanism with exact token arithmetic (buffer 100 per program).
 * Tests of the learned headroom, ageing and lending turn them on through `config`; the
 * property tests (core-properties.test.ts) run the shipped defaults.
 */
export const THUNDERAGENT_HEADROOM: SchedulerConfig = {
  ...DEFAULT_SCHEDULER_CONFIG,
  growthHeadroomSteps: 0,
  ageingMs: 0,
  newProgramStartMs: 0,
  lendAfterToolTimes: 0,
};

export interface HarnessOptions {
  backends?: string[];
  config?: Partial<SchedulerConfig>;
  policies?: Partial<SchedulerPolicies>;
  /** Capacity per backend learned by an initial tick (omit for none). */
  capacity?: number | Record<string, number>;
  /** Backends declared to schedule by priority, and how they read it. */
  priorityScheduling?: Record<string, PriorityPolarity>;
}

export function createHarness(options: HarnessOptions = {}) {
  const ids = options.backends ?? ["b0", "b1"];
  const dispatches: Dispatch[] = [];
  const rejects: Rejection[] = [];
  const cancels: Rejection[] = [];
  const logs: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
  const effects: Effects = {
    dispatch: (requestId, backendId, pausedMs, priority) =>
      dispatches.push({
        requestId,
        backendId,
        pausedMs,
        ...(priority === null ? {} : { priority }),
      }),
    reject: (requestId, error) => rejects.push({ requestId, error }),
    cancel: (requestId, error) => cancels.push({ requestId, error }),
    log: (level, msg, fields) => logs.push({ level, msg, fields }),
  };
  const specs: BackendSpec[] = ids.map((id) => {
    const polarity = options.priorityScheduling?.[id];
    return {
      id,
      type: "vllm",
      ...(polarity === undefined ? {} : { priorityScheduling: polarity }),
    };
  });
  const scheduler: CoreScheduler = createScheduler({
    config: { ...THUNDERAGENT_HEADROOM, ...options.config },
    backends: specs,
    effects,
    policies: options.policies,
  });
  let now = 1_000;
  const capacities: Record<string, number | null> = {};
  for (const id of ids) {
    const c = options.capacity;
    capacities[id] = c === undefined ? null : typeof c === "number" ? c : (c[id] ?? null);
  }

  const h = {
    scheduler,
    sample,
    dispatches,
    rejects,
    cancels,
    logs,
    get now() {
      return now;
    },
    advance(ms: number) {
      now += ms;
    },
    /** Tick with explicit samples (missing backends: sample with the harness capacity). */
    tick(samples: Record<string, BackendMetricsSample | null> = {}) {
      const metrics: Record<string, BackendMetricsSample | null> = {};
      for (const id of ids) metrics[id] = id in samples ? samples[id] : sample(capacities[id]);
      scheduler.handle({ kind: "tick", now, metrics });
    },
    /** Arrive with one message of `tokens × 5` characters (the initial ratio is 5). */
    arrive(
      requestId: string,
      programId: string | null,
      tokens: number,
      extra: {
        final?: boolean;
        maxWaitMs?: number;
        messageChars?: number[];
        priorityClass?: PriorityClass;
        classClamped?: boolean;
        budget?: ProgramBudget;
        retry?: boolean;
        parentProgramId?: string;
        /** The backend holding the stored response the request continues. */
        pinnedBackend?: string;
      } = {},
    ) {
      scheduler.handle({
        kind: "request_arrived",
        now,
        requestId,
        programId,
        messageChars: extra.messageChars ?? [tokens * 5],
        final: extra.final ?? false,
        maxWaitMs: extra.maxWaitMs,
        ...(extra.priorityClass === undefined ? {} : { priorityClass: extra.priorityClass }),
        ...(extra.classClamped === undefined ? {} : { classClamped: extra.classClamped }),
        ...(extra.budget === undefined ? {} : { budget: extra.budget }),
        ...(extra.retry === undefined ? {} : { retry: extra.retry }),
        ...(extra.parentProgramId === undefined ? {} : { parentProgramId: extra.parentProgramId }),
        ...(extra.pinnedBackend === undefined ? {} : { pinnedBackend: extra.pinnedBackend }),
      });
    },
    /** The engine's first token for the request: its prompt is prefilled. */
    firstToken(requestId: string) {
      scheduler.handle({ kind: "request_first_token", now, requestId });
    },
    usage(requestId: string, totalTokens: number, promptTokens = totalTokens) {
      const usage: Usage = {
        promptTokens,
        completionTokens: totalTokens - promptTokens,
        totalTokens,
      };
      scheduler.handle({ kind: "request_usage", now, requestId, usage });
    },
    finish(requestId: string, outcome: RequestOutcome = "ok") {
      scheduler.handle({ kind: "request_finished", now, requestId, outcome });
    },
    /** One full turn: arrive, (dispatched), usage, finish. */
    turn(requestId: string, programId: string, tokens: number) {
      h.arrive(requestId, programId, tokens);
      h.usage(requestId, tokens);
      h.finish(requestId);
    },
    dispatchOf(requestId: string): Dispatch | undefined {
      return dispatches.find((d) => d.requestId === requestId);
    },
    rejectOf(requestId: string): Rejection | undefined {
      return rejects.find((r) => r.requestId === requestId);
    },
    program(id: string) {
      return scheduler.program(id);
    },
    backend(id: string) {
      const b = scheduler.snapshot().backends.find((x) => x.id === id);
      if (b === undefined) throw new Error(`no backend ${id}`);
      return b;
    },
  };
  if (options.capacity !== undefined) h.tick();
  return h;
}

export type Harness = ReturnType<typeof createHarness>;
