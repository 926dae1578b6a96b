import type { ProgramPlan, StepPlan, Workload } from "../../src/workload/types.ts";

/**
 * A workload of sub-agent trees for the drivers' tests. Program p<i>: step 0 launches two
 * sub-agents of two calls each (2 s of tool time between them); after the last has ended the
 * parent waits 0.5 s, then its step 1.
 */
const child = (prompt: number): { steps: StepPlan[] } => ({
  steps: [
    { promptTokens: prompt, completionTokens: 5, toolMs: 2000 },
    { promptTokens: prompt + 30, completionTokens: 5, toolMs: 0 },
  ],
});

export const TREE_WORKLOAD: Workload = {
  name: "tree",
  seed: 1,
  sharedPrefixTokens: 10,
  size: Number.POSITIVE_INFINITY,
  subagentsAtOnce: 2,
  programAt: (index): ProgramPlan => ({
    programId: `p${index}`,
    index,
    source: "test",
    startOffsetMs: 0,
    steps: [
      { promptTokens: 40, completionTokens: 5, toolMs: 500, spawn: [child(60), child(70)] },
      { promptTokens: 60, completionTokens: 5, toolMs: 0 },
    ],
  }),
};
