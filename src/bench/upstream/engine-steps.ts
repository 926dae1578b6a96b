/**
 * The vLLM-like upstream's engine steps: all running requests advance one token per step, as a
 * batch in vLLM does. The step interval is `intervalMs`: 0 steps as fast as the event loop
 * turns (`setImmediate`), so every event is still its own write but none waits; 20 is a
 * decode step of a busy 8B model (50 tokens/s per request). A request whose client reads too
 * slowly waits for it (its socket's drain) before its next step.
 */
import type { ServerResponse } from "node:http";

/** One running request: `advance()` runs its next engine step; true once it has answered. */
export interface Job {
  advance(): boolean;
  /** Waiting for its client to read (its socket's drain). */
  blocked: boolean;
}

export interface EngineSteps {
  /** Requests running now. */
  running(): number;
  /** Runs `job` from the next step on, until it has answered or its client is gone. */
  run(job: Job, res: ServerResponse): void;
  /** Blocks `job` until `res` drains, then steps it again. */
  waitForDrain(job: Job, res: ServerResponse): void;
}

export function engineSteps(intervalMs: number): EngineSteps {
  const running = new Set<Job>();
  let scheduled = false;
  /** When the next paced step is due (intervalMs > 0), so timer lateness does not add up. */
  let nextStepAt = 0;
  const step = () => {
    scheduled = false;
    for (const job of running) if (!job.blocked && job.advance()) running.delete(job);
    schedule();
  };
  const schedule = () => {
    if (scheduled || running.size === 0) return;
    scheduled = true;
    if (intervalMs <= 0) {
      setImmediate(step);
      return;
    }
    const now = performance.now();
    nextStepAt = Math.max(nextStepAt + intervalMs, now);
    setTimeout(step, nextStepAt - now);
  };
  return {
    running: () => running.size,
    run(job, res) {
      running.add(job);
      res.once("close", () => running.delete(job)); // a client gone stops its request
      schedule();
    },
    waitForDrain(job, res) {
      job.blocked = true;
      res.once("drain", () => {
        job.blocked = false;
        schedule();
      });
    },
  };
}
