import type { RunRecords } from "../bench/records.ts";
import { buildRunReport } from "../bench/report.ts";
import type { SchedulerConfig } from "../core/api.ts";
import type { Effects } from "../core/effects.ts";
import { createEngine, type SimulatedEngine } from "../engine/engine.ts";
import { engineConfigFromProfile } from "../engine/timing.ts";
import type { PriorityScheduling } from "../engine/types.ts";
import { createEventKernel, type TimerHandle } from "../engine/virtual-driver.ts";
import { createDecisionRecorder, type Decision } from "../shadow/decisions.ts";
import {
  createShadow,
  type Shadow,
  type ShadowDecision,
  type ShadowSummary,
} from "../shadow/shadow.ts";
import { silentLogger } from "../util/logger.ts";
import type { Workload } from "../workload/types.ts";
import { createTruthRecorder } from "./engine-truth.ts";
import { createPriorityRecorder } from "./priority-truth.ts";
import { startProgramLoop } from "./program-loop.ts";
import { createSimRuntime, type SimRuntimeOptions } from "./sim-runtime.ts";
import { priorityReport, type SimulateRunReport } from "./simulate-report.ts";

/**
 * One simulated run, one (router, concurrency): N engines on one virtual clock, maitred's core
 * in front (src/simulate/sim-runtime.ts), the closed-loop workload (program-loop.ts), a tick
 * every scheduler interval, until warm-up + duration or, with `maxPrograms` (a fixed batch),
 * until the batch's last program ends if that comes first. Pure of the wall clock: the same
 * options give the same report.
 */

export const SIM_ROUTERS = ["tr", "default", "oracle"] as const;
export type SimRouter = (typeof SIM_ROUTERS)[number];

/** The tr knobs (every scheduler setting but the mode, which the router choice sets). */
export type TrKnobs = Omit<SchedulerConfig, "mode">;

export interface SimRunOptions {
  router: SimRouter;
  concurrency: number;
  workload: Workload;
  numBackends: number;
  profile: string;
  /** KV blocks per engine (default: the profile's); the oracle ignores it. */
  numGpuBlocks?: number;
  /** Host KV tier per engine, GiB (0 or absent: none). */
  kvOffloadingSize?: number;
  /** The engines' priority scheduling (`--scheduling-policy priority`); absent: fcfs. */
  priorityScheduling?: PriorityScheduling;
  warmupMs: number;
  durationMs: number;
  /** A fixed batch: launch this many programs and stop when the last has ended. */
  maxPrograms?: number;
  schedulerIntervalMs: number;
  knobs: TrKnobs;
  /** Engine i is seeded `engineSeed + i` (distinct generated text per backend). */
  engineSeed: number;
  onLog?: Effects["log"];
  shapeSample?: SimRuntimeOptions["shapeSample"];
  /**
   * The router's own decisions (seat, hold, pause, resume…), read off its run loop as a
   * shadow reads its own (src/shadow/decisions.ts), so the two can be compared.
   */
  onDecision?(d: Decision): void;
  /**
   * Shadow mode (`maitred serve --shadow`): a tr core beside the `default` router, fed the same
   * events, whose decisions are recorded and never carried out. Only with router `default`.
   */
  shadow?: { onDecision?(d: ShadowDecision): void };
}

export interface SimRunResult {
  report: SimulateRunReport;
  records: RunRecords;
  /** What the shadow would have done, with `shadow`. */
  shadow?: ShadowSummary;
}

const MS_PER_S = 1000;

/**
 * The window of a batch run (`--programs` without `--duration`): the run ends with the batch,
 * long before this; the bound only stops a batch that would never end (its unfinished programs
 * are then reported, and no makespan).
 */
export const BATCH_HORIZON_MS = 30 * 24 * 3600 * MS_PER_S;

/**
 * KV blocks that can never run out: every program has at most one request in flight and a
 * request holds at most ⌈maxModelLen / blockSize⌉ blocks, so C of them fit. This is the
 * oracle's "unbounded KV cache" (the upper bound the tr router is measured against).
 */
export function unboundedBlocks(concurrency: number, maxModelLen: number, blockSize: number) {
  return Math.ceil(maxModelLen / blockSize) * concurrency + 1;
}

/**
 * The context window of the simulated engines: the profile's, or less when `numGpuBlocks` is
 * too small to hold it (vLLM refuses to start then: src/engine/validate-config.ts; here the
 * window shrinks instead, so a tiny cache can still be simulated). Workloads are cut to it.
 */
export function engineMaxModelLen(profile: string, numGpuBlocks?: number): number {
  const base = engineConfigFromProfile(profile);
  if (numGpuBlocks === undefined) return base.maxModelLen;
  return Math.min(base.maxModelLen, (numGpuBlocks - 1) * base.blockSize);
}

export function buildEngines(o: SimRunOptions): SimulatedEngine[] {
  const maxModelLen = engineMaxModelLen(o.profile, o.numGpuBlocks);
  return Array.from({ length: o.numBackends }, (_, i) => {
    const base = engineConfigFromProfile(o.profile, { seed: o.engineSeed + i, maxModelLen });
    const numGpuBlocks =
      o.router === "oracle"
        ? Math.max(
            base.numGpuBlocks,
            unboundedBlocks(
              // A program's sub-agents run beside it: room for every one of them too.
              o.concurrency * Math.max(1, o.workload.subagentsAtOnce ?? 1),
              maxModelLen,
              base.blockSize,
            ),
          )
        : (o.numGpuBlocks ?? base.numGpuBlocks);
    const scheduling =
      o.priorityScheduling === undefined ? {} : { priorityScheduling: o.priorityScheduling };
    return createEngine({
      ...base,
      numGpuBlocks,
      kvOffloadingSize: o.kvOffloadingSize ?? 0,
      ...scheduling,
    });
  });
}

export function runSimulation(o: SimRunOptions): SimRunResult {
  if (o.shadow !== undefined && o.router !== "default")
    throw new Error(`a tr shadow runs beside the default router, not ${o.router}`);
  const kernel = createEventKernel();
  const engines = buildEngines(o);
  const config: SchedulerConfig = { ...o.knobs, mode: o.router === "tr" ? "tr" : "default" };
  const runtime = createSimRuntime({
    kernel,
    engines,
    config,
    onLog: o.onLog,
    shapeSample: o.shapeSample,
  });
  const shadow = attachObservers(o, runtime, config);
  const truth = createTruthRecorder(runtime.backends);
  const intervalS = o.schedulerIntervalMs / MS_PER_S;
  const endMs = o.warmupMs + o.durationMs;
  const endS = endMs / MS_PER_S;
  const classes = createPriorityRecorder(runtime.scheduler, {
    startS: o.warmupMs / MS_PER_S,
    endS,
  });

  // The first tick comes before any arrival, so the core knows every capacity (tr places
  // nothing on a backend of unknown capacity). As in the HTTP runtime (src/service/service.ts),
  // a deadline of the core (forced resume, idle lease) between two ticks gets a tick of its
  // own, without samples.
  let deadline: TimerHandle | null = null;
  let nextTick: TimerHandle | null = null;
  // Set when a fixed batch has ended: the run ends there, so nothing more is scheduled.
  let batchEndMs: number | null = null;
  const armDeadline = () => {
    deadline?.cancel();
    deadline = null;
    if (batchEndMs !== null) return;
    // With a shadow, one timer ticks for both cores, as in the HTTP router (service.ts): the
    // default core acts in a tick only on what is due, so the shadow's ticks change nothing
    // for it, and the shadow gets the deadline ticks tr would have had.
    const own = runtime.scheduler.nextDeadline();
    const watcher = shadow?.nextDeadline() ?? null;
    const at = own === null ? watcher : watcher === null ? own : Math.min(own, watcher);
    // A deadline not in the future is one the core chose not to act on yet (e.g. the idle
    // lease of a busy program): re-arming at `now` would loop without time passing.
    if (at === null || at / MS_PER_S <= kernel.now) return;
    deadline = kernel.schedule(at / MS_PER_S, () => {
      deadline = null;
      runtime.deadlineTick(at);
      armDeadline();
    });
  };
  const tick = () => {
    const samples = runtime.tick();
    truth.onTick(kernel.now, samples, runtime.scheduler.snapshot());
    classes.onTick(kernel.now);
    armDeadline();
    if (batchEndMs === null) nextTick = kernel.after(intervalS, tick);
  };
  kernel.schedule(0, tick);
  kernel.schedule(o.warmupMs / MS_PER_S, () => {
    truth.markWindowStart(runtime.scheduler.snapshot().counters);
    classes.markWindowStart();
  });

  const records: RunRecords = { steps: [], errors: [], programs: [], endMs: 0 };
  startProgramLoop({
    runtime,
    workload: o.workload,
    concurrency: o.concurrency,
    records,
    maxPrograms: o.maxPrograms,
    // Without ticks or deadlines the kernel runs dry: every program has ended, so no engine
    // has work; the warm-up mark may still come, on counters that no longer change.
    onAllEnded: () => {
      batchEndMs = runtime.nowMs();
      nextTick?.cancel();
      deadline?.cancel();
    },
  });
  kernel.run(endS);
  records.endMs = batchEndMs ?? endMs;
  const runEndS = records.endMs / MS_PER_S;

  const base = buildRunReport(
    {
      router: o.router,
      concurrency: o.concurrency,
      workload: o.workload.name,
      seed: o.workload.seed,
      unreleased: o.workload.unreleased,
      timeScale: 1,
      warmupMs: o.warmupMs,
      durationMs: o.durationMs,
      programs: o.maxPrograms,
    },
    records,
  );
  const t = truth.finish(
    { startS: o.warmupMs / MS_PER_S, endS: runEndS },
    runtime.scheduler.snapshot().counters,
  );
  const waiting = runtime.waitingByClass();
  const priority = classes.finish(waiting);
  const parked = Object.values(waiting);
  const report: SimulateRunReport = {
    ...base,
    simulated: {
      profile: o.profile,
      num_backends: o.numBackends,
      num_gpu_blocks: engines[0].config.numGpuBlocks,
      kv_offloading_size: o.kvOffloadingSize ?? 0,
      // Only a run that asked for it says so: a first come, first served report is unchanged.
      ...(o.priorityScheduling === undefined
        ? {}
        : { priority_scheduling: priorityReport(o.priorityScheduling) }),
      block_size: engines[0].config.blockSize,
      scheduler_interval_ms: o.schedulerIntervalMs,
      scheduler_config: config,
    },
    backends: t.backends,
    scheduler: t.scheduler,
    acting_held_tokens_mean: t.acting_held_tokens_mean,
    still_parked_max_ms: parked.length === 0 ? null : parked.reduce((m, x) => Math.max(m, x)),
    ...(priority === undefined ? {} : { priority }),
    series: t.series,
  };
  return { report, records, ...(shadow === null ? {} : { shadow: shadow.summary() }) };
}

/** The observers of the router's run loop: the recorder of its own decisions and the shadow. */
function attachObservers(
  o: SimRunOptions,
  runtime: ReturnType<typeof createSimRuntime>,
  config: SchedulerConfig,
): Shadow | null {
  if (o.onDecision === undefined && o.shadow === undefined) return null;
  const { loop } = runtime;
  if (o.onDecision !== undefined) loop.addHooks(createDecisionRecorder(() => loop, o.onDecision));
  if (o.shadow === undefined) return null;
  const shadow = createShadow({
    config,
    backends: runtime.backends.map((b) => ({ id: b.id, type: "vllm" })),
    logger: silentLogger,
    now: () => runtime.nowMs(),
    onDecision: o.shadow.onDecision,
  });
  loop.addHooks(shadow.hooks);
  return shadow;
}
