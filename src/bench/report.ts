import type { PriorityClass } from "../core/priority/priority-classes.ts";
import {
  buildClassReports,
  type ClassReport,
  inWindow,
  ttftValues,
  type Window,
} from "./class-report.ts";
import type { EnginePromptTokens } from "./engine-window.ts";
import { type Summary, summarize } from "./percentile.ts";
import {
  type BatchJson,
  batchReport,
  type ProgramCompletionJson,
  programCompletion,
} from "./program-completion.ts";
import type { RunMeta, RunRecords } from "./records.ts";

/**
 * Pure reporting over run records, shared by `maitred bench` and `maitred simulate`. The
 * throughput metric is ThunderAgent's: steps/min over a steady window that starts after a
 * warm-up (their scripts count steps from 10 to 70 min after start).
 */

const MS_PER_MIN = 60_000;

export type SteadyWindow = Window;

/**
 * The window is [warmup, warmup + duration) clipped to the run's end; without a duration it
 * runs to the end. A window that the run's end cuts short includes that end: the run's last
 * step ended no later, and on a virtual clock at that very instant. A run shorter than its
 * warm-up has an empty window.
 */
export function steadyWindow(
  meta: Pick<RunMeta, "warmupMs" | "durationMs">,
  runEndMs: number,
): SteadyWindow {
  const startMs = Math.min(meta.warmupMs, runEndMs);
  const planned = meta.durationMs === undefined ? runEndMs : meta.warmupMs + meta.durationMs;
  const endMs = Math.max(startMs, Math.min(planned, runEndMs));
  const closed = endMs > startMs && (meta.durationMs === undefined || planned > runEndMs);
  return { startMs, endMs, closed };
}

/** Steps per minute of window; 0 for an empty window. */
export function stepsPerMinute(stepEnds: readonly number[], w: SteadyWindow): number {
  const span = w.endMs - w.startMs;
  if (span <= 0) return 0;
  return stepEnds.filter((t) => inWindow(t, w)).length / (span / MS_PER_MIN);
}

type Num = number | null;
const num = (v: number, digits = 1): Num => {
  if (!Number.isFinite(v)) return null;
  const f = 10 ** digits;
  return Math.round(v * f) / f;
};

export interface LatencyJson {
  p50: Num;
  p95: Num;
  p99: Num;
  mean: Num;
  max: Num;
}

export interface RunReport {
  router: string;
  url?: string;
  concurrency: number;
  workload: string;
  seed: number;
  time_scale: number;
  /** Share of programs whose client never released them; absent when every client did. */
  unreleased_share?: number;
  window_ms: { start: number; end: number };
  steps_per_min: number;
  steps_completed: number;
  programs_started: number;
  /** Programs that finished inside the window. */
  programs_completed: number;
  programs_completed_total: number;
  programs_failed: number;
  /** Per-step latency (request sent → response received) of steps ending in the window. */
  step_latency_ms: LatencyJson;
  /** Request sent → first output token, of the window's steps that measured it. */
  ttft_ms: LatencyJson & { count: number };
  /** Program launch → end of its first response, over every program that got one. */
  first_response_ms: LatencyJson & { min: Num; spread: Num; stdev: Num; count: number };
  /**
   * First request → release of each program completed in the window, whatever its start
   * (program-completion.ts); `count` of them, `unfinished` left out.
   */
  program_completion_ms: ProgramCompletionJson;
  /** The fixed batch of a `--programs N` run, with its makespan; absent otherwise. */
  batch?: BatchJson;
  /** Time steps ending in the window were held by the router: the longest is `per_step_max`. */
  paused_ms: { total: number; steps_paused: number; per_step_p95: Num; per_step_max: Num };
  /** `cached` / `prefilled` (re-prefilled) are null when the backend reports no cache figures. */
  prompt_tokens: { total: number; cached: Num; prefilled: Num; cache_hit_rate: Num };
  completion_tokens: number;
  errors: Record<string, number>;
  errors_total: number;
  /** Per priority class (class-report.ts); programs without a class count as `default`. */
  classes: Partial<Record<PriorityClass, ClassReport>>;
  /**
   * The same window's prompt tokens as the engines counted them (engine-window.ts), when the
   * run could read them (`bench compare`'s simulated backends); null when a reading failed.
   */
  engine_prompt_tokens?: EnginePromptTokens | null;
}

function latency(s: Summary): LatencyJson {
  return { p50: num(s.p50), p95: num(s.p95), p99: num(s.p99), mean: num(s.mean), max: num(s.max) };
}

export function buildRunReport(meta: RunMeta, records: RunRecords): RunReport {
  const w = steadyWindow(meta, records.endMs);
  const steps = records.steps.filter((s) => inWindow(s.endMs, w));
  const prompt = steps.reduce((a, s) => a + s.promptTokens, 0);
  // Cache figures only over steps whose backend reported them (vLLM needs
  // --enable-prompt-tokens-details), so a silent backend reads "unknown", not "0% hits".
  const reporting = steps.filter((s) => s.cachedTokens !== null);
  const reportedPrompt = reporting.reduce((a, s) => a + s.promptTokens, 0);
  const cached = reporting.reduce((a, s) => a + (s.cachedTokens as number), 0);
  const firsts = summarize(
    records.programs
      .filter((p) => p.firstResponseMs !== undefined)
      .map((p) => (p.firstResponseMs as number) - p.launchMs),
  );
  const errors: Record<string, number> = {};
  for (const e of records.errors) errors[e.kind] = (errors[e.kind] ?? 0) + 1;
  const completed = records.programs.filter((p) => p.outcome === "completed");
  const ttft = summarize(ttftValues(steps));
  const report: RunReport = {
    router: meta.router,
    concurrency: meta.concurrency,
    workload: meta.workload,
    seed: meta.seed,
    time_scale: meta.timeScale,
    ...(meta.unreleased === undefined ? {} : { unreleased_share: meta.unreleased }),
    window_ms: { start: Math.round(w.startMs), end: Math.round(w.endMs) },
    steps_per_min:
      num(
        stepsPerMinute(
          steps.map((s) => s.endMs),
          w,
        ),
        2,
      ) ?? 0,
    steps_completed: steps.length,
    programs_started: records.programs.length,
    programs_completed: completed.filter((p) => p.endMs !== undefined && inWindow(p.endMs, w))
      .length,
    programs_completed_total: completed.length,
    programs_failed: records.programs.filter((p) => p.outcome === "failed").length,
    step_latency_ms: latency(summarize(steps.map((s) => s.endMs - s.startMs))),
    ttft_ms: { ...latency(ttft), count: ttft.count },
    first_response_ms: {
      ...latency(firsts),
      min: num(firsts.min),
      spread: num(firsts.max - firsts.min),
      stdev: num(firsts.stdev),
      count: firsts.count,
    },
    program_completion_ms: programCompletion(records, w),
    ...(meta.programs === undefined ? {} : { batch: batchReport(records, meta.programs) }),
    paused_ms: {
      total: Math.round(steps.reduce((a, s) => a + s.pausedMs, 0)),
      steps_paused: steps.filter((s) => s.pausedMs > 0).length,
      per_step_p95: num(summarize(steps.map((s) => s.pausedMs)).p95),
      per_step_max: num(summarize(steps.map((s) => s.pausedMs)).max),
    },
    prompt_tokens: {
      total: prompt,
      cached: reporting.length === 0 ? null : cached,
      prefilled: reporting.length === 0 ? null : reportedPrompt - cached,
      cache_hit_rate: reportedPrompt === 0 ? null : num(cached / reportedPrompt, 4),
    },
    completion_tokens: steps.reduce((a, s) => a + s.completionTokens, 0),
    errors,
    errors_total: records.errors.length,
    classes: buildClassReports(records, w),
  };
  if (meta.url !== undefined) report.url = meta.url;
  return report;
}

/** The `--json FILE` document. */
export interface BenchJson {
  runs: RunReport[];
}

export function benchJson(runs: readonly RunReport[]): BenchJson {
  return { runs: [...runs] };
}
