import { ConfigError } from "../errors.ts";
import type { Workload } from "./types.ts";

/**
 * "What if my tools were slower?": the same programs with every tool (and human) time
 * multiplied by `factor` (`--tool-time-scale`). Prompts, outputs and order stay as they
 * are, so runs at different factors compare the scheduler on the same work.
 */
export function scaleToolTimes(workload: Workload, factor: number): Workload {
  if (factor === 1) return workload;
  return {
    ...workload,
    programAt(index) {
      const p = workload.programAt(index);
      return { ...p, steps: p.steps.map((s) => ({ ...s, toolMs: Math.round(s.toolMs * factor) })) };
    },
  };
}

/** The flag's value: a finite number > 0. */
export function parseToolTimeScale(raw: string): number {
  const v = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(v) || v <= 0) {
    throw new ConfigError("--tool-time-scale", `must be a number > 0, got "${raw}"`);
  }
  return v;
}
