import type { Effects } from "./effects.ts";
import type { SchedulerEvent } from "./events.ts";
import type { SchedulerPolicies } from "./scheduler-state.ts";

/**
 * The scheduler core's public surface: the run loop feeds it events, adapters read snapshots.
 * Built by `createScheduler` (src/core/scheduler.ts); pure, synchronous, single writer.
 */

export type RouterMode = "tr" | "default";
export type Placement = "best-fit" | "worst-fit";
export type ProgramStatus = "REASONING" | "ACTING";
export type ProgramState = "ACTIVE" | "PAUSED" | "TERMINATED";

export interface BackendSpec {
  /** Stable id: the backend's base URL (ThunderAgent keys everything by URL). */
  id: string;
  type: "vllm" | "sglang";
}

export interface SchedulerConfig {
  mode: RouterMode;
  placement: Placement;
  /** Weight on ACTING tokens in capacity (ThunderAgent `--acting-token-weight`, default 1.0). */
  actingTokenWeight: number;
  /** 2^(−t) decay of acting tokens in the resume calculation (`--use-acting-token-decay`). */
  useActingTokenDecay: boolean;
  /** Tokens of headroom per active program (ThunderAgent BUFFER_PER_PROGRAM = 100). */
  bufferPerProgram: number;
  /** Force resume after this long paused (ms; ThunderAgent 1800 s). */
  maxPauseMs: number;
  /** Release programs idle this long (ms; default 1800 s). */
  idleTimeoutMs: number;
  /** Streaming books are updated every this many completion tokens. */
  progressIntervalTokens: number;
  /** Consecutive failed polls/forwards before a backend is unhealthy. */
  unhealthyAfterFailures: number;
}

export interface ProgramView {
  id: string;
  backend: string | null;
  originBackend: string | null;
  status: ProgramStatus;
  state: ProgramState;
  totalTokens: number;
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
}

export interface BackendView {
  id: string;
  healthy: boolean;
  /** Failed polls/forwards in a row (reset by a successful poll or response). */
  consecutiveFailures: number;
  capacityTokens: number | null;
  usedTokens: number;
  remainingTokens: number | null;
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
}

export interface SchedulerSnapshot {
  mode: RouterMode;
  now: number;
  programs: ProgramView[];
  backends: BackendView[];
  counters: SchedulerCounters;
  /** Requests parked (waiting for resume or for a first placement). */
  queueLength: number;
  /** Programs in the paused queue (with or without a parked request). */
  pausedPrograms: number;
}

export interface Scheduler {
  handle(event: SchedulerEvent): void;
  program(id: string): ProgramView | undefined;
  snapshot(): SchedulerSnapshot;
  /**
   * Earliest time (ms, event clock) at which a tick would act on a timeout (forced resume,
   * `maxWaitMs`, idle lease), or null. Optional use: a runtime may tick early at that time.
   */
  nextDeadline(): number | null;
  /**
   * How long each request dispatched since the last call was held parked (ms; only requests
   * that were parked). The metrics adapter drains this into a histogram. Bounded: the oldest
   * observations are dropped past MAX_PAUSE_OBSERVATIONS if nobody drains.
   */
  drainPauseObservations(): number[];
}

export interface CreateSchedulerOptions {
  config: SchedulerConfig;
  backends: BackendSpec[];
  effects: Effects;
  /** Replace the pure ordering/placement/victim decisions (defaults: the tr policies). */
  policies?: Partial<SchedulerPolicies>;
}
