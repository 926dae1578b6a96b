import type { BackendSpec, ProgramState, ProgramStatus, SchedulerCounters } from "./api.ts";
import { type ClassRules, singleClassRules } from "./class-rules.ts";
import type { Effects } from "./effects.ts";
import type { BackendMetricsSample } from "./events.ts";
import { createMedianWindow, type MedianWindow } from "./median-window.ts";
import type { PauseVictimFn } from "./pause-victims.ts";
import type { PlacementFn } from "./placement.ts";
import { type ClassIndex, DEFAULT_CLASS_INDEX } from "./priority/priority-classes.ts";
import type { ClassBook, PriorityState } from "./priority/priority-state.ts";
import type { ResumeOrder } from "./resume-order.ts";
import { PRIOR_WINDOW, type ResolvedSchedulerConfig } from "./scheduler-config.ts";
import { createTokenEstimator, type TokenEstimator } from "./token-estimator.ts";
import type { TruthBook } from "./truth.ts";

/**
 * The scheduler's mutable state: plain records, touched only by the run loop through
 * `handle()` (seed 002: one writer, no locks). Each module in src/core works on this object.
 */

export interface ProgramRecord {
  readonly id: string;
  /** Creation order: the stable tie-break among equal programs. */
  readonly seq: number;
  readonly parentProgramId: string | null;
  /**
   * A request sent without a program id runs as a program of one step of its own: admitted,
   * queued and bounded like any other, released when it ends, never listed or nameable.
   */
  readonly anonymous: boolean;
  /** REASONING while ≥1 request is in flight, ACTING otherwise (seed 004). */
  status: ProgramStatus;
  /** ACTIVE on `backend`, or PAUSED in the queue (TERMINATED records are dropped). */
  state: ProgramState;
  backend: BackendBook | null;
  /** Backend it was paused from; resume prefers it while its prefix may still be cached. */
  originBackend: string | null;
  /** False until first placed: such programs form the "new" resume group. */
  placedOnce: boolean;
  /** Tokens this program counts for in its backend's books (its footprint). */
  tokens: number;
  /** Tokens it counts for in its backend's materialised sum (the shared credit; ledger.ts). */
  creditTokens: number;
  /** Headroom it counts for in its backend's books (headroom.ts). */
  headroom: number;
  /** Moving average of its context growth per step; −1 until two steps have ended. */
  growthEma: number;
  /** Its engine total at the end of its last step with usage; −1 before. */
  lastStepTokens: number;
  /**
   * ACTING past its expected tool time: its tokens and headroom are lent to waiting work
   * (left out of its backend's books) until it sends again (lending.ts).
   */
  lent: boolean;
  /** Moving average of its tool-call durations (ms); −1 until one has been seen. */
  toolEma: number;
  /** The resume pass during which it was last paused (such a program waits for the next). */
  pausedInPass: number;
  /** Set by each resume pass: a parked request waited `ageingMs` (resume-order.ts). */
  aged: boolean;
  /** Last known total: set when a request ends (engine usage when it came, else the estimate). */
  knownTokens: number;
  /** Messages already covered by `knownTokens` (0 until the first usage). */
  countedMessages: number;
  steps: number;
  inFlight: RequestRecord[];
  parked: RequestRecord[];
  markedForPause: boolean;
  actingSince: number;
  pausedSince: number | null;
  pausedMsTotal: number;
  lastActivity: number;
  /** Order of entry into the queue: the stable tie-break of the resume order. */
  queueSeq: number;
  /** Stamp of the last resume pass that listed this program (deduplicates `queueOrder`). */
  orderStamp: number;
  /** Priority class of its latest request (issue 5); `default` while priorities are off. */
  cls: ClassIndex;
  /** Order of its latest placement on a backend: preemption takes the most recent first. */
  admitSeq: number;
}

export interface RequestRecord {
  readonly id: string;
  /** null = anonymous (also after its program was released while it ran). */
  program: ProgramRecord | null;
  backend: BackendBook | null;
  parkedAt: number | null;
  readonly maxWaitMs: number | null;
  readonly final: boolean;
  readonly promptChars: number;
  readonly messageCount: number;
  /** Context estimate at arrival (tokens). */
  readonly baseTokens: number;
  /** Current tokens: base + streamed completion, replaced by `usage.total_tokens`. */
  tokens: number;
  progressApplied: number;
  usageSeen: boolean;
  cancelled: boolean;
  /** The engine produced its first token: its prompt is in the KV cache (the shared credit). */
  prefilled: boolean;
  /** Priority class the request arrived with (its queue, timeout and counters). */
  cls: ClassIndex;
  /** The adapter committed its first byte to the client: never preempted from then on. */
  firstByte: boolean;
}

export interface BackendBook {
  readonly id: string;
  readonly type: BackendSpec["type"];
  healthy: boolean;
  consecutiveFailures: number;
  /** KV capacity in tokens; null until a metrics sample carries it. */
  capacity: number | null;
  /** Prefix-sharing credit from engine truth, refreshed every tick. */
  shared: number;
  /** The last SHARED_CREDIT_SAMPLES raw credits, oldest first (backend-health.ts). */
  readonly creditSamples: number[];
  /** Σ tokens of REASONING programs whose request the engine has prefilled (ledger.ts). */
  materialisedTokens: number;
  /** Σ headroom of the active programs (headroom.ts). */
  headroomTokens: number;
  /** Σ headroom of the REASONING programs (their next step's growth: room.ts). */
  reasoningHeadroom: number;
  /** ACTIVE programs whose room is lent (lending.ts). */
  lentPrograms: number;
  /** The engine's last report, beside the books; null = unknown (truth.ts). */
  truth: TruthBook | null;
  /** Preemption counter of the previous sample (a rise means the engine is preempting). */
  lastPreemptions: number | null;
  /** Σ headroom of the marked programs. */
  markedHeadroom: number;
  reasoningTokens: number;
  actingTokens: number;
  reasoningPrograms: number;
  actingPrograms: number;
  markedTokens: number;
  markedPrograms: number;
  /** Acting-token decay accumulator (see ledger.ts `decayedActingTokens`). */
  decaySum: number;
  decayBase: number;
  anonymousInFlight: number;
  anonymousTokens: number;
  readonly programs: Set<ProgramRecord>;
  /** Every request dispatched here and not yet finished (program and anonymous). */
  readonly inFlight: Set<RequestRecord>;
  lastMetrics: BackendMetricsSample | null;
  /** Per-class share of the books, only while priorities are on (ledger.ts keeps it). */
  classBooks: ClassBook[] | null;
}

/** The swappable pure decisions (queue policies and priority classes plug in here). */
export interface SchedulerPolicies {
  resumeOrder: ResumeOrder;
  place: PlacementFn;
  pauseVictims: PauseVictimFn;
}

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
  readonly estimator: TokenEstimator;
  pauseObservations: number[];
  shuttingDown: boolean;
  queueSeq: number;
  programSeq: number;
  /** Resume passes run so far (`ProgramRecord.pausedInPass`). */
  resumePass: number;
  /** Placement counter behind `ProgramRecord.admitSeq`. */
  admitSeq: number;
  /** Priority classes, reservations and per-class queues; null = priorities off (issue 5). */
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
    healthy: true,
    consecutiveFailures: 0,
    capacity: null,
    shared: 0,
    creditSamples: [],
    materialisedTokens: 0,
    headroomTokens: 0,
    markedHeadroom: 0,
    reasoningHeadroom: 0,
    lentPrograms: 0,
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
    },
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
    anonymous,
    status: "ACTING",
    state: "PAUSED",
    backend: null,
    originBackend: null,
    placedOnce: false,
    tokens: 0,
    creditTokens: 0,
    headroom: 0,
    growthEma: -1,
    lastStepTokens: -1,
    lent: false,
    toolEma: -1,
    pausedInPass: -1,
    aged: false,
    knownTokens: 0,
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
  };
}
