import type { PriorityClass } from "../core/priority/priority-classes.ts";

/**
 * What a run produces, as plain data: the live driver records these on the wall clock, the
 * simulator on its virtual clock, and report.ts turns either into the same report. Times are
 * milliseconds since the run started.
 */

/** One LLM call that returned a usable response. */
export interface StepRecord {
  programId: string;
  stepIndex: number;
  /** Request sent. */
  startMs: number;
  /** Response fully received. */
  endMs: number;
  promptTokens: number;
  /** `usage.prompt_tokens_details.cached_tokens`; null when the backend does not report it. */
  cachedTokens: number | null;
  completionTokens: number;
  /** Time the router held the request (`x-maitred-paused-ms`; 0 elsewhere). */
  pausedMs: number;
  /**
   * First output token received (ms since start); TTFT = this − `startMs`, so it includes
   * the time the router held the request and any retries. Absent when not measured.
   */
  firstTokenMs?: number;
}

/** A failed call; `kind` is `http_<status>[_<code>]` or a transport error name. */
export interface ErrorRecord {
  programId: string;
  stepIndex: number;
  atMs: number;
  kind: string;
}

export type ProgramOutcome = "completed" | "failed" | "unfinished";

export interface ProgramRecord {
  programId: string;
  /**
   * The program took a concurrency slot and its start offset had passed; both drivers send
   * its first request at this instant.
   */
  launchMs: number;
  /** End of its first response, if it got one. */
  firstResponseMs?: number;
  /**
   * Completion or failure time. A completed program ends when its last response is received:
   * the driver releases it at that instant, and one whose client never releases it
   * (`--unreleased`) ends there too, so its completion time does not wait for the router's
   * idle timeout.
   */
  endMs?: number;
  outcome: ProgramOutcome;
  /** The class its requests asked for (`x-priority`); absent = none (the router's `default`). */
  priorityClass?: PriorityClass;
  /**
   * A sub-agent's parent (its `programId` here, whether or not its requests named it). Its
   * `endMs` is when its last response arrived or it failed; its parent's next call follows.
   */
  parentProgramId?: string;
}

export interface RunRecords {
  /** Every LLM call that returned, sub-agents' included (they count in steps/min). */
  steps: StepRecord[];
  errors: ErrorRecord[];
  /**
   * The programs the closed loop launched into its slots. Sub-agents are not among them: they
   * run inside their parent's program, whose completion time includes them.
   */
  programs: ProgramRecord[];
  /** Sub-agents launched (with `parentProgramId`), in launch order; absent when none was. */
  subagents?: ProgramRecord[];
  /** When the run stopped (ms since start). */
  endMs: number;
}

export interface RunMeta {
  /** Label of the system under test: `default`, `tr`, a URL… */
  router: string;
  url?: string;
  concurrency: number;
  workload: string;
  seed: number;
  timeScale: number;
  /** Share of programs whose client never released them (`--unreleased`); absent = none. */
  unreleased?: number;
  warmupMs: number;
  /** Steady-window length; undefined = until the run ends. */
  durationMs?: number;
  /** The fixed batch the run was given (`--programs N`), whose makespan the report gives. */
  programs?: number;
}
