import type { Effects } from "../../src/core/effects.ts";
import {
  runSimulation,
  type SimRunOptions,
  type SimRunResult,
} from "../../src/simulate/run-simulation.ts";
import { resolveTrKnobs } from "../../src/simulate/simulate-options.ts";
import { parseWorkloadArg } from "../../src/workload/load-workload.ts";
import type { Workload } from "../../src/workload/types.ts";
import { createWorkload } from "../../src/workload/workload.ts";

/**
 * Small simulated clusters for tests: a synthetic agent workload, short simulated durations
 * and (by default) a tiny KV cache of 2,000 blocks × 16 tokens per engine, so that a handful
 * of programs already overflows it.
 */

export const TINY_BLOCKS = 2000;

export function smallWorkload(seed = 3): Workload {
  // Contexts are cut to what one tiny engine can hold, as simulate-options does.
  return createWorkload({
    kind: "preset",
    name: "swe-bash",
    seed,
    staggerMs: 200,
    maxContextTokens: (TINY_BLOCKS - 1) * 16,
  });
}

function smallOptions(over: Partial<SimRunOptions>): SimRunOptions {
  const { knobs, schedulerIntervalMs } = resolveTrKnobs({});
  return {
    router: "tr",
    concurrency: 12,
    workload: smallWorkload(),
    numBackends: 2,
    profile: "llama-3.1-8b-h100",
    numGpuBlocks: TINY_BLOCKS,
    warmupMs: 10_000,
    durationMs: 170_000,
    schedulerIntervalMs,
    knobs,
    engineSeed: 1,
    ...over,
  };
}

export function smallRun(over: Partial<SimRunOptions> = {}): SimRunResult {
  return runSimulation(smallOptions(over));
}

const shared = new Map<string, SimRunResult>();

/**
 * `smallRun`, run once per test file for the same options: a run is a pure function of its
 * options (run-simulation.test.ts checks the JSON is byte-identical), so tests that only read
 * its report and records share it. `mix` selects `smallMixWorkload()` instead of the default.
 */
export function sharedRun(
  over: Omit<Partial<SimRunOptions>, "workload" | "onLog" | "shapeSample"> = {},
  mix = false,
): SimRunResult {
  const options = smallOptions(mix ? { ...over, workload: smallMixWorkload() } : over);
  const key = JSON.stringify({ ...options, workload: mix ? SMALL_MIX : "small" });
  let run = shared.get(key);
  if (run === undefined) {
    run = runSimulation(options);
    shared.set(key, run);
  }
  return run;
}

/** Core decision logs by message, to compare with the report's counters. */
export function logCounter(): { onLog: Effects["log"]; counts: Map<string, number> } {
  const counts = new Map<string, number>();
  return {
    counts,
    onLog: (_level, msg) => {
      counts.set(msg, (counts.get(msg) ?? 0) + 1);
    },
  };
}

/** 3 of 12 slots interactive chat sessions, 9 bulk swe-bash agents, cut to the tiny cache. */
export const SMALL_MIX = "mix:chat@interactive=0.25,swe-bash@bulk=0.75";

export function smallMixWorkload(seed = 3): Workload {
  return createWorkload(
    parseWorkloadArg(SMALL_MIX, { seed, staggerMs: 200, maxContextTokens: (TINY_BLOCKS - 1) * 16 }),
  );
}
