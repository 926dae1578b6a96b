import { type Summary, summarize } from "../bench/percentile.ts";
import type { ProgramPlan } from "./types.ts";

/**
 * The per-program and per-step statistics of an agent workload, computed over
 * plans, so a trace and a preset can be compared with the same ruler (and a preset checked
 * against the figures it was fitted to).
 */
export interface WorkloadStats {
  programs: number;
  steps: Summary;
  firstPrompt: Summary;
  lastPrompt: Summary;
  /** Per program: (last prompt − first prompt) / (steps − 1), programs with ≥ 2 steps. */
  growthPerStep: Summary;
  completion: Summary;
  /** Gaps after every step but the last (tool and human gaps). */
  toolMs: Summary;
}

export function workloadStats(plans: readonly ProgramPlan[]): WorkloadStats {
  const completion: number[] = [];
  const tool: number[] = [];
  const growth: number[] = [];
  for (const p of plans) {
    p.steps.forEach((s, i) => {
      completion.push(s.completionTokens);
      if (i < p.steps.length - 1) tool.push(s.toolMs);
    });
    const n = p.steps.length;
    if (n >= 2) growth.push((p.steps[n - 1].promptTokens - p.steps[0].promptTokens) / (n - 1));
  }
  return {
    programs: plans.length,
    steps: summarize(plans.map((p) => p.steps.length)),
    firstPrompt: summarize(plans.map((p) => p.steps[0].promptTokens)),
    lastPrompt: summarize(plans.map((p) => p.steps[p.steps.length - 1].promptTokens)),
    growthPerStep: summarize(growth),
    completion: summarize(completion),
    toolMs: summarize(tool),
  };
}
