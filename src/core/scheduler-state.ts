import type { BudgetKind, SchedulerCounters } from "./api.ts";
import { singleClassRules } from "./class-rules.ts";
import type { Effects } from "./effects.ts";
import { createMedianWindow, type MedianWindow } from "./median-window.ts";
import { DEFAULT_CLASS_INDEX } from "./priority/priority-classes.ts";
import type { PriorityState } from "./priority/priority-state.ts";
import type {
  BackendBook,
  BackendSpec,
  ClassRules,
  EndedId,
  ProgramRecord,
  RequestRecord,
  SchedulerPolicies,
} from "./records.ts";
import { PRIOR_WINDOW, type ResolvedSchedulerConfig } from "./scheduler-config.ts";
import { createTokenEstimator, type TokenEstimator } from "./token-estimator.ts";

/**
 * The scheduler's mutable state: plain records, touched only by the run loop through
 * `handle()` (one writer, no locks). Each module in src/core works on this object.
 */

export interface SchedulerState {
  readonly config: ResolvedSchedulerConfig;
  readonly effects: Effects;
  readonly policies: SchedulerPolicies;
  now: number;
  readonly backends: BackendBook[];
  readonly backendById: Map<string, BackendBook>;
  /** Backend position by id (backends are fixed at construction). */
  readonly backendIndex: ReadonlyMap<string, number>;
  /** What priority classes change in the passes (class-rules.ts); one class when off. */
  rules: ClassRules;
  readonly programs: Map<string, ProgramRecord>;
  readonly requests: Map<string, RequestRecord>;
  /** PAUSED programs, including new ones never placed. */
  readonly queue: Set<ProgramRecord>;
  /**
   * The queue in resume order, lazily: programs are appended on entry, and each resume pass
   * drops stale entries and re-sorts (TimSort is near-linear on the near-sorted array).
   */
  queueOrder: ProgramRecord[];
  orderStamp: number;
  /** A lower bound of the smallest need (tokens + buffer) in the queue: resume exits early. */
  needFloor: number;
  /** Queued programs with at least one parked request. */
  waitingPrograms: number;
  /**
   * Programs in order of last activity (insertion order; touch = delete + add). Keyed by
   * record: a request without a program id gets a program of its own that no id can name.
   */
  readonly idleOrder: Set<ProgramRecord>;
  /** Parked requests in order of parking (events arrive in time order). */
  readonly parkedOrder: Map<string, RequestRecord>;
  /** Parked requests that carry `maxWaitMs`. */
  readonly deadlines: Set<RequestRecord>;
  readonly counters: SchedulerCounters;
  /** Programs ended by a budget, by which (budget.ts). */
  readonly budgetsExhausted: Record<BudgetKind, number>;
  /**
   * Programs the router ended on its own, by id, with when and why (ended-ids.ts): by a
   * budget, whose id stays refused for a while, or as likely done, whose return is counted.
   * Bounded; `endedOrder` keeps their age order.
   */
  readonly ended: Map<string, EndedId>;
  /**
   * The ended ids oldest first, each with the entry it was remembered with: an id forgotten
   * or remembered again since leaves a stale place here, passed over when it comes up.
   */
  readonly endedOrder: { ids: string[]; entries: EndedId[]; head: number };
  /** Programs marked likely done, in order of marking (= of their release times). */
  readonly likelyDone: Set<ProgramRecord>;
  readonly estimator: TokenEstimator;
  pauseObservations: number[];
  shuttingDown: boolean;
  queueSeq: number;
  programSeq: number;
  /** Resume passes run so far (`ProgramRecord.pausedInPass`). */
  resumePass: number;
  /** Placement counter behind `ProgramRecord.admitSeq`. */
  admitSeq: number;
  /** The arrival of the first request given an engine order (engine-order.ts); null = none yet. */
  orderEpoch: number | null;
  /** Priority classes, reservations and per-class queues; null = priorities off. */
  priority: PriorityState | null;
  /** All programs' recent step growths: the headroom of programs without their own (tokens). */
  readonly growthPrior: MedianWindow;
  /** All programs' recent tool-call durations (ms): when idle room is lent (lending.ts). */
  readonly toolPrior: MedianWindow;
}

export function createBackendBook(spec: BackendSpec): BackendBook {
  return {
    id: spec.id,
    type: spec.type,
    priorityPolarity: spec.priorityScheduling ?? null,
    healthy: true,
    consecutiveFailures: 0,
    capacity: null,
    capacityWarned: false,
    shared: 0,
    creditSamples: [],
    materialisedTokens: 0,
    headroomTokens: 0,
    markedHeadroom: 0,
    reasoningHeadroom: 0,
    lentPrograms: 0,
    lentTokens: 0,
    pausedFromTokens: 0,
    truth: null,
    lastPreemptions: null,
    reasoningTokens: 0,
    actingTokens: 0,
    reasoningPrograms: 0,
    actingPrograms: 0,
    markedTokens: 0,
    markedPrograms: 0,
    decaySum: 0,
    decayBase: 0,
    anonymousInFlight: 0,
    anonymousTokens: 0,
    programs: new Set(),
    inFlight: new Set(),
    lastMetrics: null,
    classBooks: null,
  };
}

export function createSchedulerState(
  config: ResolvedSchedulerConfig,
  backends: BackendSpec[],
  effects: Effects,
  policies: SchedulerPolicies,
): SchedulerState {
  const books = backends.map(createBackendBook);
  const state: SchedulerState = {
    config,
    effects,
    policies,
    now: 0,
    backends: books,
    backendById: new Map(books.map((b) => [b.id, b])),
    backendIndex: new Map(books.map((b, i) => [b.id, i])),
    rules: null as unknown as ClassRules, // set below, once the state exists
    programs: new Map(),
    requests: new Map(),
    queue: new Set(),
    queueOrder: [],
    orderEpoch: null,
    orderStamp: 0,
    needFloor: Number.POSITIVE_INFINITY,
    waitingPrograms: 0,
    idleOrder: new Set(),
    parkedOrder: new Map(),
    deadlines: new Set(),
    counters: {
      pauses: 0,
      marks: 0,
      resumes: 0,
      forcedResumes: 0,
      releases: 0,
      idleReleases: 0,
      migrations: 0,
      likelyDoneMarks: 0,
      likelyDoneContinued: 0,
      likelyDoneReleases: 0,
      likelyDoneReturns: 0,
    },
    likelyDone: new Set(),
    budgetsExhausted: { steps: 0, tokens: 0, wall: 0 },
    ended: new Map(),
    endedOrder: { ids: [], entries: [], head: 0 },
    estimator: createTokenEstimator(),
    pauseObservations: [],
    shuttingDown: false,
    queueSeq: 0,
    programSeq: 0,
    admitSeq: 0,
    resumePass: 0,
    priority: null,
    growthPrior: createMedianWindow(PRIOR_WINDOW),
    toolPrior: createMedianWindow(PRIOR_WINDOW),
  };
  state.rules = singleClassRules(state);
  return state;
}

export function createProgramRecord(
  id: string,
  seq: number,
  parentProgramId: string | null,
  now: number,
  anonymous = false,
): ProgramRecord {
  return {
    id,
    seq,
    parentProgramId,
    parent: null,
    children: new Set(),
    anonymous,
    status: "ACTING",
    state: "PAUSED",
    backend: null,
    originBackend: null,
    pinnedBackend: null,
    placedOnce: false,
    tokens: 0,
    creditTokens: 0,
    headroom: 0,
    growthEma: -1,
    lastStepTokens: -1,
    lent: false,
    toolEma: -1,
    pausedInPass: -1,
    knownTokens: 0,
    servedOn: null,
    countedMessages: 0,
    steps: 0,
    inFlight: [],
    parked: [],
    markedForPause: false,
    actingSince: now,
    pausedSince: null,
    pausedMsTotal: 0,
    lastActivity: now,
    queueSeq: 0,
    orderStamp: 0,
    cls: DEFAULT_CLASS_INDEX,
    admitSeq: 0,
    budget: null,
    usedTokens: 0,
    budgetSteps: 0,
    startedAt: now,
    likelyDoneAt: null,
    goesOnAfterStop: false,
  };
}
