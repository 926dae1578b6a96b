import type { BudgetKind, BudgetView } from "./budget-rules.ts";
import type { Effects } from "./effects.ts";
import type { SchedulerEvent } from "./events.ts";
import type { PriorityClass } from "./priority/priority-classes.ts";
import type { PriorityConfig } from "./priority/priority-config.ts";
import type { PrioritySnapshot, QueueWaitObservation } from "./priority/priority-views.ts";
import type {
  BackendSpec,
  EngineOrderName,
  PriorityPolarity,
  ProgramState,
  ProgramStatus,
  SchedulerPolicies,
} from "./records.ts";
import type { TierPacking } from "./scheduler-constants.ts";

export {
  BUDGET_KINDS,
  type BudgetKind,
  type BudgetUse,
  type BudgetView,
  lowerBudget,
} from "./budget-rules.ts";
export type { ProgramBudget } from "./events.ts";
export {
  clampClass,
  DEFAULT_PRIORITY_CLASS,
  isPriorityClass,
  PRIORITY_CLASSES,
  type PriorityClass,
  parsePriorityClass,
  type RequestClassResult,
  resolveRequestClass,
} from "./priority/priority-classes.ts";
export {
  DEFAULT_CLASS_SETTINGS,
  PRIORITY_POLICIES,
  type PriorityClassSettings,
  type PriorityConfig,
  type PriorityConfigResult,
  type PriorityPolicy,
  QUEUE_POLICIES,
  type QueuePolicy,
  type ResolvedPriorityConfig,
  resolvePriorityConfig,
  SLO_AGE_WEIGHT_PER_MS,
} from "./priority/priority-config.ts";
export type {
  ClassRoomView,
  ClassView,
  PrioritySnapshot,
} from "./priority/priority-views.ts";
export {
  ADMISSION_OUTCOMES,
  type AdmissionOutcome,
  type QueueWaitObservation,
} from "./priority/priority-views.ts";
export { progressDue } from "./progress-rule.ts";
export type { BackendSpec, ProgramState, ProgramStatus } from "./records.ts";

/**
 * The scheduler core's public surface: the run loop feeds it events, adapters read snapshots.
 * Built by `createScheduler` (src/core/scheduler.ts); pure, synchronous, single writer.
 */

export type RouterMode = "tr" | "default";
export type Placement = "best-fit" | "worst-fit";

export interface SchedulerConfig {
  mode: RouterMode;
  placement: Placement;
  /**
   * The order handed to backends declared to schedule by priority (engine-order.ts). Absent =
   * DEFAULT_ENGINE_ORDER. Backends not so declared never get a `priority` field.
   */
  engineOrder?: EngineOrderName;
  /**
   * Where a backend's host tier holds the contexts: let the engine rotate the programs within
   * GPU and tier (`rotate`, absent) or pack them under the GPU (`gpu`; the `throughput`
   * preset's). scheduler-constants.ts `TierPacking`.
   */
  tierPacking?: TierPacking;
  /** Weight on ACTING tokens in capacity (ThunderAgent `--acting-token-weight`, default 1.0). */
  actingTokenWeight: number;
  /** 2^(−t) decay of acting tokens in the resume calculation (`--use-acting-token-decay`). */
  useActingTokenDecay: boolean;
  /**
   * Tokens of headroom per active program (ThunderAgent BUFFER_PER_PROGRAM = 100). With
   * `growthHeadroom` it is the floor of each program's learned headroom.
   */
  bufferPerProgram: number;
  /**
   * Headroom per active program = max(bufferPerProgram, this many of its learned step growths),
   * see src/core/headroom.ts. Absent = GROWTH_HEADROOM_STEPS (4); 0 = ThunderAgent's flat
   * buffer.
   */
  growthHeadroomSteps?: number;
  /**
   * A parked request waiting this long (ms) makes its program "aged": it is resumed first in
   * its group and, when it does not fit, holds one backend until it does (src/core/resume.ts).
   * Absent = AGEING_MS; 0 = off (pure smallest-first, as the original).
   */
  ageingMs?: number;
  /**
   * A new program's first request waiting this long (ms) has room made for it, oldest first,
   * as an aged one does (src/core/wait-bounds.ts). Absent = NEW_PROGRAM_START_MS; 0 = off
   * (new programs wait by the ageing bound, as every other request).
   */
  newProgramStartMs?: number;
  /**
   * An ACTING program's room is lent to waiting work once its tool call has run this many
   * times its expected tool time (src/core/lending.ts). Absent = LEND_AFTER_TOOL_TIMES; 0 =
   * never (ThunderAgent: an ACTING program keeps its room until it is paused).
   */
  lendAfterToolTimes?: number;
  /**
   * A program expected to stay in its tool call longer than this (ms) lends its room at once,
   * and none holds it longer. Absent = LEND_MAX_HOLD_MS.
   */
  lendMaxHoldMs?: number;
  /**
   * A program whose answer ended with `finish_reason: "stop"` and no tool call is likely done:
   * its room is lent at once and it is released this long after (ms) unless it sends again
   * (src/core/likely-done.ts). Absent = FINAL_GRACE_MS; 0 = off.
   */
  finalGraceMs?: number;
  /**
   * The bound on every pause (ms; ThunderAgent's forced resume, 1800 s): a request held this
   * long is seated, its backend over capacity by at most that program (src/core/resume.ts).
   */
  maxPauseMs: number;
  /** Release programs idle this long (ms; default 1800 s). */
  idleTimeoutMs: number;
  /** Streaming books are updated every this many completion tokens. */
  progressIntervalTokens: number;
  /** Consecutive failed polls/forwards before a backend is unhealthy. */
  unhealthyAfterFailures: number;
  /**
   * Priority classes, reservations and per-class queues. Absent = off (tr exactly as
   * before); `{}` = the built-in class defaults. Invalid = logged at error, run without (never
   * throws). tr mode only.
   */
  priority?: PriorityConfig;
}

export interface ProgramView {
  id: string;
  backend: string | null;
  originBackend: string | null;
  status: ProgramStatus;
  state: ProgramState;
  totalTokens: number;
  /** Learned headroom it books on top of its tokens (src/core/headroom.ts). */
  headroomTokens: number;
  /** In a long tool call: its room is lent to waiting work (src/core/lending.ts). */
  lent: boolean;
  steps: number;
  inFlight: number;
  /** Requests held until the program is resumed. */
  parkedRequests: number;
  markedForPause: boolean;
  /** Total time spent in the queue, including the current stay. */
  pausedMs: number;
  pausedSince: number | null;
  parentProgramId: string | null;
  lastActivity: number;
  /** Class of its latest request; present only while priorities are on. */
  priorityClass?: PriorityClass;
  /** Its budgets and their use; present only when it has one. */
  budget?: BudgetView;
  /** When its last answer marked it likely done (src/core/likely-done.ts); null = not marked. */
  likelyDoneAt: number | null;
  /** Ids of its live sub-agents (src/core/tree.ts), in the order they started. */
  children: string[];
}

/**
 * The engine's last report on a backend beside the router's books (src/core/room.ts). Every
 * figure the engine did not report is null (unknown), never 0.
 */
export interface EngineTruthView {
  /** Event time of the sample. */
  sampledAt: number;
  kvUsage: number | null;
  running: number | null;
  waiting: number | null;
  /** The engine's preemption counter rose since the previous sample. */
  preempting: boolean;
  /** Tokens dispatched or prefilling that the sample cannot show yet. */
  pendingTokens: number;
  /** The engine is waiting or preempting: the backend counts as full. */
  full: boolean;
  /** Room by the engine's report (null when unknown or full). */
  roomTokens: number | null;
  /** Truth room − belief room: positive = the books are more pessimistic than the engine. */
  gapTokens: number | null;
}

export interface BackendView {
  id: string;
  healthy: boolean;
  /** Failed polls/forwards in a row (reset by a successful poll or response). */
  consecutiveFailures: number;
  capacityTokens: number | null;
  /**
   * What admission bounds the backend by (pause-price.ts): its GPU's KV, or where a pause
   * costs a transfer from its host tier, what GPU and tier hold together. null while unknown.
   */
  admissionCapacityTokens: number | null;
  /** What a pause costs there now: a re-prefill, or a transfer from its host KV tier. */
  pausePrice: "prefill" | "transfer";
  /** The engine's host link as it measured its own loads, bytes a second; null = unknown. */
  hostLoadBytesPerSecond: number | null;
  /**
   * How its engine reads the `priority` each request carries (engine-order.ts); null = it was
   * not declared to schedule by priority and gets none.
   */
  priorityScheduling: PriorityPolarity | null;
  /** The router's belief: reasoning + w·acting − shared + Σ headroom (lent room excluded). */
  usedTokens: number;
  /** admission capacity − usedTokens (null while the capacity is unknown). */
  beliefRoomTokens: number | null;
  /**
   * The room admission reads: the belief corrected by the engine's truth (room.ts). null while
   * the capacity is unknown: such a backend takes one program per sample while its engine
   * queues nothing.
   */
  remainingTokens: number | null;
  /** The engine's last report; null until a sample, and after a failed poll. */
  truth: EngineTruthView | null;
  /** Programs whose room is lent during a long tool call. */
  lentPrograms: number;
  sharedTokens: number;
  markedTokens: number;
  reasoningTokens: number;
  actingTokens: number;
  activePrograms: number;
  reasoningPrograms: number;
  actingPrograms: number;
  anonymousInFlight: number;
  lastMetrics: import("./events.ts").BackendMetricsSample | null;
}

/** Monotonic decision counters (rendered as Prometheus counters by the metrics adapter). */
export interface SchedulerCounters {
  /** ACTIVE programs moved to the queue (over capacity, or marked and their turn ended). */
  pauses: number;
  /** REASONING programs marked for pause. */
  marks: number;
  /** Programs taken off the queue onto a backend, forced ones and first placements included. */
  resumes: number;
  /** The subset of `resumes` forced by `maxPauseMs`. */
  forcedResumes: number;
  /** Programs ended, `idleReleases` included. */
  releases: number;
  idleReleases: number;
  /** Programs placed on another backend than the one they were paused from or left. */
  migrations: number;
  /** Programs whose answer ended with no tool call, marked likely done (likely-done.ts). */
  likelyDoneMarks: number;
  /** Likely-done programs that sent again within the grace: they went on as before. */
  likelyDoneContinued: number;
  /** Likely-done programs released when the grace ended (included in `releases`). */
  likelyDoneReleases: number;
  /** Requests that came for a program after it was released as likely done: released early. */
  likelyDoneReturns: number;
}

/**
 * Which bound starts making room for a held request (src/core/wait-bounds.ts): the ageing
 * bound, its class's starvation threshold (priorities on), a new program's start bound, the
 * rotation bound where a pause costs a transfer, or the max pause itself when that comes first.
 */
export type HoldBound = "ageing" | "class_threshold" | "new_program" | "rotation" | "max_pause";

/**
 * Where a held (parked) request stands (src/core/hold-position.ts): its program's place in the
 * order the resume pass considers programs with a held request, how long it has waited, and
 * the bounds on its wait. Times are on the event clock (ms).
 */
export interface HoldView {
  programId: string;
  /** The held request (a program's oldest, when asked by program). */
  requestId: string;
  /** 1 = the program the resume pass considers first. */
  position: number;
  /** Programs with a held request: how many `position` counts among. */
  waitingPrograms: number;
  parkedAt: number;
  /** As of the core's last event; a runtime on its own clock reads `now − parkedAt`. */
  waitedMs: number;
  /** When the resume pass starts making room for it (it is overdue), and by which bound. */
  roomAt: number | null;
  roomBound: HoldBound | null;
  /** When it is seated at the latest: the max pause. */
  seatAt: number;
  /** The client's `maxWaitMs`: answered 503 then if still held; null without one. */
  maxWaitAt: number | null;
  /** Priorities on: its class's queue timeout (answered 408 then); null when off. */
  queueTimeoutAt: number | null;
  /** The held request's class; present only while priorities are on. */
  priorityClass?: PriorityClass;
}

export interface SchedulerSnapshot {
  mode: RouterMode;
  now: number;
  programs: ProgramView[];
  /**
   * The one-step programs of requests sent without a program id, on a backend or queued
   * (their ids are `anonymous request <request id>`); not in `programs`, which lists named ones.
   */
  anonymousPrograms: ProgramView[];
  backends: BackendView[];
  counters: SchedulerCounters;
  /** Requests parked (waiting for resume or for a first placement). */
  queueLength: number;
  /** Programs in the paused queue (with or without a parked request). */
  pausedPrograms: number;
  /**
   * Ids of programs the router ended on its own that it still remembers (ended-ids.ts): at
   * most ENDED_ID_LIMIT, each for up to ENDED_ID_TTL_MS.
   */
  endedPrograms: number;
  /** Programs ended because a request came past their budget, by the budget it passed. */
  budgetsExhausted: Record<BudgetKind, number>;
  /** Per-class counters, queues and reserved vs used room; present only while priorities are on. */
  priority?: PrioritySnapshot;
}

export interface Scheduler {
  handle(event: SchedulerEvent): void;
  program(id: string): ProgramView | undefined;
  snapshot(): SchedulerSnapshot;
  /** Whether the backend takes new placements (false for an unknown id). */
  backendHealthy(backendId: string): boolean;
  /**
   * Recount every book from the program and request records and list where the incremental
   * sums disagree (empty = consistent). O(programs + requests): for tests and debugging.
   */
  audit?(): string[];
  /**
   * Earliest time (ms, event clock) at which a tick would act on a timeout (forced resume,
   * `maxWaitMs`, idle lease), or null. Optional use: a runtime may tick early at that time.
   */
  nextDeadline(): number | null;
  /**
   * How long each request dispatched since the last call was held parked (ms; only requests
   * that were parked). The router's runtime takes them after every event and observes each into
   * its histogram at once (src/runtime/observation-taps.ts), so a metrics scrape only reads.
   * Bounded: the oldest observations are dropped past MAX_PAUSE_OBSERVATIONS if nobody drains.
   */
  drainPauseObservations(): number[];
  /**
   * The atomic first-byte commit (a request that has sent its first byte is never preempted). Call
   * synchronously, before writing a request's first response byte to its client: true = committed
   * (never preempted from now on); false = the request was already cancelled (preempted, or its
   * backend went unhealthy): write nothing, the `cancel` effect answers it. Optional only so that
   * test fakes need not implement it; `createScheduler` always does.
   */
  tryCommitFirstByte?(requestId: string): boolean;
  /**
   * Queue waits by class of requests dispatched since the last call (ms, only requests that
   * were parked), then cleared; empty while priorities are off. Bounded like
   * `drainPauseObservations`. Optional for test fakes; `createScheduler` always implements it.
   */
  drainQueueWaitObservations?(): QueueWaitObservation[];
  /**
   * Where a held request stands: by its request id, or a program's oldest held request; null
   * when it is not held. Read-only, O(held programs): a held stream asks on every keep-alive.
   */
  holdOf(key: { requestId: string } | { programId: string }): HoldView | null;
  /** Every program with a held request, in position order (the live page). */
  holds(): HoldView[];
}

/** What `createScheduler` returns: every optional method implemented. */
export type CoreScheduler = Scheduler &
  Required<Pick<Scheduler, "tryCommitFirstByte" | "drainQueueWaitObservations" | "audit">> & {
    /** Whether priorities are in force (false when off, or when their config was invalid). */
    readonly prioritiesEnabled: boolean;
  };

export interface CreateSchedulerOptions {
  config: SchedulerConfig;
  backends: BackendSpec[];
  effects: Effects;
  /** Replace the pure ordering/placement/victim decisions (defaults: the tr policies). */
  policies?: Partial<SchedulerPolicies>;
}
