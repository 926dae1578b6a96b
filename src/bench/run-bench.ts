import type { Clock } from "../runtime/clock.ts";
import { limitContext, loadWorkload } from "../workload/load-workload.ts";
import type { Workload, WorkloadSpec } from "../workload/types.ts";
import type { BenchApi } from "./api-request.ts";
import { startClosedLoop } from "./closed-loop.ts";
import { startProgressBar } from "./progress-bar.ts";
import type { RunRecords } from "./records.ts";
import { buildRunReport, type RunReport } from "./report.ts";
import { createStepClient } from "./step-client.ts";

/**
 * One live bench run against one URL: closed loop over HTTP, then the pure report. `compare`
 * calls this once per system under test, with the same workload, in one process.
 */

export interface BenchRunOptions {
  /** Label for the report (`default`, `tr`, the URL…). */
  router: string;
  url: string;
  workload: Workload;
  model: string;
  concurrency: number;
  timeScale: number;
  warmupMs: number;
  durationMs?: number;
  maxPrograms?: number;
  /** Draw a progress bar on stderr when it is a TTY. */
  progress?: boolean;
  programIdPrefix?: string;
  /** Share of programs whose requests stream (closed-loop.ts); default 1. */
  streamShare?: number;
  /** The API the steps are sent in (api-request.ts); default chat completions. */
  api?: BenchApi;
  /** The driver's time (default: the wall clock). */
  clock?: Clock;
  /** Called once the closed loop has started: the run's time zero. */
  onStart?: () => void;
}

export interface BenchRunResult {
  report: RunReport;
  records: RunRecords;
}

export async function runBench(o: BenchRunOptions): Promise<BenchRunResult> {
  // A program's sub-agents run at once beside it: room in the pool for all of them.
  const connections = o.concurrency * Math.max(1, o.workload.subagentsAtOnce ?? 1);
  const client = createStepClient({ url: o.url, connections, api: o.api });
  try {
    const loop = startClosedLoop({
      workload: o.workload,
      client,
      model: o.model,
      concurrency: o.concurrency,
      timeScale: o.timeScale,
      warmupMs: o.warmupMs,
      durationMs: o.durationMs,
      maxPrograms: o.maxPrograms,
      programIdPrefix: o.programIdPrefix,
      streamShare: o.streamShare,
      clock: o.clock,
    });
    o.onStart?.();
    const bar = o.progress
      ? startProgressBar(loop.progress, {
          label: o.router,
          warmupMs: o.warmupMs,
          totalMs: o.durationMs === undefined ? undefined : o.warmupMs + o.durationMs,
          totalPrograms: o.maxPrograms,
        })
      : null;
    // Ctrl-C ends the run early but still reports what was measured; a repeat of it (the
    // terminal's and a launcher's, or a supervisor's) changes nothing.
    const onSigint = () => loop.stop();
    process.on("SIGINT", onSigint);
    let records: RunRecords;
    try {
      records = await loop.done;
    } finally {
      process.removeListener("SIGINT", onSigint);
      bar?.stop();
    }
    const report = buildRunReport(
      {
        router: o.router,
        url: o.url,
        concurrency: o.concurrency,
        workload: o.workload.name,
        seed: o.workload.seed,
        unreleased: o.workload.unreleased,
        timeScale: o.timeScale,
        warmupMs: o.warmupMs,
        durationMs: o.durationMs,
        programs: o.maxPrograms,
      },
      records,
    );
    return { report, records };
  } finally {
    await client.close();
  }
}

/** The workload and pacing settings shared by every run of `bench` and `bench compare`. */
export interface BenchSettings {
  workload: WorkloadSpec;
  concurrency: number;
  timeScale: number;
  warmupMs: number;
  /** Undefined when only `--programs` bounds the run. */
  durationMs?: number;
  maxPrograms?: number;
  progress?: boolean;
  /** Share of programs whose requests stream; the rest send plain JSON requests. */
  streamShare?: number;
  /** `--api`: chat completions, Messages or Responses. */
  api?: BenchApi;
  /** The driver's time (default: the wall clock; tests run it on a virtual one). */
  clock?: Clock;
}

/**
 * Loads the workload, limited to the served context length when one is known, and runs it
 * against one target.
 */
export async function runBenchAt(
  s: BenchSettings,
  target: {
    label: string;
    url: string;
    model: string;
    maxModelLen: number | null;
    programIdPrefix: string;
    onStart?: () => void;
  },
): Promise<BenchRunResult> {
  const spec = target.maxModelLen ? limitContext(s.workload, target.maxModelLen) : s.workload;
  return runBench({
    router: target.label,
    url: target.url,
    model: target.model,
    workload: await loadWorkload(spec),
    concurrency: s.concurrency,
    timeScale: s.timeScale,
    warmupMs: s.warmupMs,
    durationMs: s.durationMs,
    maxPrograms: s.maxPrograms,
    progress: s.progress,
    programIdPrefix: target.programIdPrefix,
    streamShare: s.streamShare,
    api: s.api,
    clock: s.clock,
    onStart: target.onStart,
  });
}
