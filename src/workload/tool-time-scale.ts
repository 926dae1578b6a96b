import { mapToolTimes } from "./subagents.ts";
import type { Workload } from "./types.ts";

/**
 * "What if my tools were slower?": the same programs with every tool (and human) time
 * multiplied by `factor` (`--tool-time-scale`), sub-agents' included. Prompts, outputs and order stay as they
 * are, so runs at different factors compare the scheduler on the same work. A live run's
 * `--time-scale` divides these scaled times again: the two compose. This wraps `programAt`
 * only; loadWorkload scales each component of a mix before the mix is built, so that its
 * per-slot draws (`mix.programOf`) are scaled too.
 */
export function scaleToolTimes(workload: Workload, factor: number): Workload {
  if (factor === 1) return workload;
  return {
    ...workload,
    programAt(index) {
      const p = workload.programAt(index);
      return { ...p, steps: mapToolTimes(p.steps, (ms) => Math.round(ms * factor)) };
    },
  };
}
