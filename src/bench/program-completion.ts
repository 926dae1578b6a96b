import { inWindow, type LatencySummary, latencySummary, type Window } from "./class-report.ts";
import type { ProgramRecord, RunRecords } from "./records.ts";

/**
 * How long whole programs take, shared by `maitred bench` and `maitred simulate`: step
 * latency alone hides whether programs finish sooner (a router can shorten steps yet hold a
 * program's later steps longer).
 *
 * A program's completion time runs from its first request to its release: the driver releases
 * a program the instant its last response arrives, and a program whose client never releases
 * it (`--unreleased`) counts to that same instant, the end of its last step, not to the
 * router's idle timeout. Only completed programs have one: a failed program is counted as
 * failed, not timed.
 *
 * Which programs: those that completed in the steady window, whatever their start (a program
 * launched during the warm-up and done in the window counts with its whole time), as the
 * window's `programs_completed` counts them. Programs still running when the run stops are left
 * out (their time is unknown, only bounded); the report gives how many, since a window short
 * next to the programs' length leaves out the longest ones.
 */

export interface ProgramCompletionJson extends LatencySummary {
  /** Programs timed: those completed in the steady window. */
  count: number;
  /** Programs still running when the run stopped, left out. */
  unfinished: number;
}

/**
 * A fixed batch of programs (`--programs N`), as an RL rollout waits for one: it is done when
 * the last of its programs has ended.
 */
export interface BatchJson {
  programs: number;
  completed: number;
  failed: number;
  /** Programs not ended when the run stopped, including any never launched. */
  unfinished: number;
  /**
   * Run start → the end of the batch's last program (completed or failed: a rollout waits for
   * a failed trajectory too); null when the run stopped before every program ended.
   */
  makespan_ms: number | null;
}

/** First request → release (or the end of its last step) of a completed program. */
export function completionMs(p: ProgramRecord): number | undefined {
  return p.outcome === "completed" && p.endMs !== undefined ? p.endMs - p.launchMs : undefined;
}

/** Completion times of the programs that completed in window `w`. */
export function completionTimes(programs: readonly ProgramRecord[], w: Window): number[] {
  const out: number[] = [];
  for (const p of programs) {
    const ms = completionMs(p);
    if (ms !== undefined && inWindow(p.endMs as number, w)) out.push(ms);
  }
  return out;
}

export function programCompletion(records: RunRecords, w: Window): ProgramCompletionJson {
  const times = completionTimes(records.programs, w);
  return {
    ...latencySummary(times),
    count: times.length,
    unfinished: records.programs.filter((p) => p.outcome === "unfinished").length,
  };
}

/** The batch of the first `size` programs launched (a batch run launches no others). */
export function batchReport(records: RunRecords, size: number): BatchJson {
  const batch = records.programs.slice(0, size);
  const ended = batch.filter((p) => p.outcome !== "unfinished" && p.endMs !== undefined);
  const completed = ended.filter((p) => p.outcome === "completed").length;
  return {
    programs: size,
    completed,
    failed: ended.length - completed,
    unfinished: size - ended.length,
    makespan_ms:
      ended.length === size && size > 0
        ? // A fold, not Math.max(...): a spread of a large batch overflows the call stack.
          Math.round(ended.reduce((m, p) => Math.max(m, p.endMs as number), 0))
        : null,
  };
}
