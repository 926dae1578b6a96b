import type { LoopProgress } from "./closed-loop.ts";

/**
 * A one-line progress bar for a terminal (stderr, redrawn in place). Only used when stderr is
 * a TTY, so logs and pipes stay clean; the report itself goes to stdout.
 */

const BAR_WIDTH = 24;
/** Redraw period; a human does not read faster. */
export const PROGRESS_INTERVAL_MS = 500;

export interface ProgressTarget {
  label: string;
  warmupMs: number;
  /** Warm-up + steady window, when the run is time-bounded. */
  totalMs?: number;
  /** Programs to run, when the run is count-bounded. */
  totalPrograms?: number;
}

export function renderProgress(p: LoopProgress, t: ProgressTarget): string {
  const byTime = t.totalMs !== undefined ? p.elapsedMs / t.totalMs : 0;
  const byCount =
    t.totalPrograms !== undefined ? (p.programsStarted - p.programsRunning) / t.totalPrograms : 0;
  const frac = Math.max(0, Math.min(1, Math.max(byTime, byCount)));
  const filled = Math.round(frac * BAR_WIDTH);
  const phase = p.elapsedMs < t.warmupMs ? "warm-up" : "steady";
  const secs = (ms: number) => `${(ms / 1000).toFixed(0)}s`;
  const time =
    t.totalMs !== undefined ? `${secs(p.elapsedMs)}/${secs(t.totalMs)}` : secs(p.elapsedMs);
  return (
    `${t.label} [${"#".repeat(filled)}${".".repeat(BAR_WIDTH - filled)}] ${time} ${phase}` +
    `  steps ${p.stepsCompleted}  programs ${p.programsCompleted} done, ${p.programsRunning} running` +
    `  errors ${p.errors}`
  );
}

export interface ProgressBar {
  stop(): void;
}

export function startProgressBar(
  progress: () => LoopProgress,
  target: ProgressTarget,
  stream: NodeJS.WriteStream = process.stderr,
): ProgressBar {
  if (!stream.isTTY) return { stop: () => {} };
  const draw = () => {
    const width = Math.max(1, (stream.columns ?? 120) - 1);
    stream.write(`\r${renderProgress(progress(), target).slice(0, width).padEnd(width)}`);
  };
  const timer = setInterval(draw, PROGRESS_INTERVAL_MS);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      draw();
      stream.write("\n");
    },
  };
}
