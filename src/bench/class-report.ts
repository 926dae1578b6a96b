import {
  DEFAULT_PRIORITY_CLASS,
  PRIORITY_CLASSES,
  type PriorityClass,
} from "../core/priority/priority-classes.ts";
import { summarize } from "./percentile.ts";
import type { RunRecords, StepRecord } from "./records.ts";

/**
 * Per-class latency and throughput,
 * shared by `maitred bench` and `maitred simulate`. A program's class is the one its requests
 * asked for; a program that asked for none is counted under `default`, the class the router
 * gives it. Steps and errors count inside the steady window, like the run's steps/min.
 */

type Num = number | null;

export interface LatencySummary {
  p50: Num;
  p95: Num;
  p99: Num;
  mean: Num;
  max: Num;
}

export interface ClassReport {
  programs_started: number;
  /** Programs of the class that completed, over the whole run. */
  programs_completed: number;
  programs_failed: number;
  steps_completed: number;
  steps_per_min: number;
  /** Request sent (first attempt) → response received. */
  step_latency_ms: LatencySummary;
  /**
   * Request sent (first attempt) → first output token: includes the router's hold and any
   * retries. null figures when the driver could not see the first token.
   */
  ttft_ms: LatencySummary & { count: number };
  /** Time the router held each step's request (`x-maitred-paused-ms`). */
  queue_wait_ms: { p95: Num; max: Num; steps_held: number };
  /** Errors by kind (`http_429_…`, `http_408_…`, `http_503_preempted`, …), in the window. */
  errors: Record<string, number>;
  errors_total: number;
}

export interface Window {
  startMs: number;
  endMs: number;
  /**
   * Whether a step ending at `endMs` is in the window: yes when the window ends because the
   * run did (on a virtual clock the last step ends at that very instant), no when it ends
   * because its duration is over (a step ending then is past the window).
   */
  closed: boolean;
}

/** Whether time `t` falls in the window. */
export const inWindow = (t: number, w: Window): boolean =>
  t >= w.startMs && (t < w.endMs || (w.closed && t === w.endMs));

const MS_PER_MIN = 60_000;

const num = (v: number, digits = 1): Num => {
  if (!Number.isFinite(v)) return null;
  const f = 10 ** digits;
  return Math.round(v * f) / f;
};

export function latencySummary(values: readonly number[]): LatencySummary {
  const s = summarize(values);
  return { p50: num(s.p50), p95: num(s.p95), p99: num(s.p99), mean: num(s.mean), max: num(s.max) };
}

/** TTFT of each step that measured one. */
export function ttftValues(steps: readonly StepRecord[]): number[] {
  const out: number[] = [];
  for (const s of steps) if (s.firstTokenMs !== undefined) out.push(s.firstTokenMs - s.startMs);
  return out;
}

function sortKeys<T>(rec: Record<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const k of Object.keys(rec).sort()) out[k] = rec[k];
  return out;
}

/** Per-class reports, keys in class order (system first); only classes that ran a program. */
export function buildClassReports(
  records: RunRecords,
  w: Window,
): Partial<Record<PriorityClass, ClassReport>> {
  const classOf = new Map<string, PriorityClass>();
  // A sub-agent's steps count in its class (its parent's) like its parent's steps.
  for (const p of [...records.programs, ...(records.subagents ?? [])]) {
    classOf.set(p.programId, p.priorityClass ?? DEFAULT_PRIORITY_CLASS);
  }
  const spanMin = Math.max(0, w.endMs - w.startMs) / MS_PER_MIN;
  const out: Partial<Record<PriorityClass, ClassReport>> = {};
  for (const cls of PRIORITY_CLASSES) {
    const programs = records.programs.filter((p) => classOf.get(p.programId) === cls);
    if (programs.length === 0) continue;
    const steps = records.steps.filter(
      (s) => classOf.get(s.programId) === cls && inWindow(s.endMs, w),
    );
    const errors: Record<string, number> = {};
    let errorsTotal = 0;
    for (const e of records.errors) {
      if (classOf.get(e.programId) !== cls || !inWindow(e.atMs, w)) continue;
      errors[e.kind] = (errors[e.kind] ?? 0) + 1;
      errorsTotal++;
    }
    const ttft = ttftValues(steps);
    const waits = steps.map((s) => s.pausedMs);
    const waitSummary = summarize(waits);
    out[cls] = {
      programs_started: programs.length,
      programs_completed: programs.filter((p) => p.outcome === "completed").length,
      programs_failed: programs.filter((p) => p.outcome === "failed").length,
      steps_completed: steps.length,
      steps_per_min: spanMin > 0 ? (num(steps.length / spanMin, 2) ?? 0) : 0,
      step_latency_ms: latencySummary(steps.map((s) => s.endMs - s.startMs)),
      ttft_ms: { ...latencySummary(ttft), count: ttft.length },
      queue_wait_ms: {
        p95: num(waitSummary.p95),
        max: num(waitSummary.max),
        steps_held: waits.filter((v) => v > 0).length,
      },
      errors: sortKeys(errors),
      errors_total: errorsTotal,
    };
  }
  return out;
}
