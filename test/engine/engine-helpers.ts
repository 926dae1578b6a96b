/** Shared fixtures for engine tests: small configs, request builders, a run-to-idle loop. */

import { createEngine, type SimulatedEngine } from "../../src/engine/engine.ts";
import { type EngineConfigOverrides, engineConfigFromProfile } from "../../src/engine/timing.ts";
import type {
  EngineConfig,
  EngineRequest,
  RequestOutput,
  StepResult,
} from "../../src/engine/types.ts";

/** 4 usable blocks of 16 tokens unless overridden: small enough to hand-work. */
export function smallConfig(overrides: EngineConfigOverrides = {}): EngineConfig {
  return engineConfigFromProfile("llama-3.1-8b-h100", {
    numGpuBlocks: 5,
    maxModelLen: 64,
    ...overrides,
  });
}

/** A host tier of `blocks` blocks of 16 tokens: 1 GiB at the bytes per token that makes it so. */
export function hostTier(blocks: number): EngineConfigOverrides {
  return { kvOffloadingSize: 1, kvBytesPerToken: 2 ** 30 / (16 * blocks) };
}

export function smallEngine(overrides: EngineConfigOverrides = {}): SimulatedEngine {
  return createEngine(smallConfig(overrides));
}

/** Distinct token ids per `base`, so prompts never share blocks by accident. */
export function tokens(n: number, base = 1000): number[] {
  return Array.from({ length: n }, (_, i) => base + i);
}

export function request(
  id: string,
  promptTokens: readonly number[],
  options: Partial<Omit<EngineRequest, "id" | "promptTokens">> = {},
): EngineRequest {
  return {
    id,
    promptTokens,
    maxTokens: 8,
    minTokens: 0,
    ignoreEos: true,
    arrivalTime: 0,
    ...options,
  };
}

export interface Run {
  steps: StepResult[];
  outputs: Map<string, RequestOutput[]>;
  end: number;
}

/** Step back to back from `start` until the engine is idle (or `maxSteps`, a test guard). */
export function runToIdle(
  engine: SimulatedEngine,
  start = 0,
  onStep?: (r: StepResult) => void,
  maxSteps = 100_000,
): Run {
  const run: Run = { steps: [], outputs: new Map(), end: start };
  for (let i = 0; i < maxSteps; i++) {
    const r = engine.step(run.end);
    if (r === null) return run;
    run.steps.push(r);
    run.end = r.startTime + r.duration;
    for (const o of r.outputs) {
      const list = run.outputs.get(o.id) ?? [];
      list.push(o);
      run.outputs.set(o.id, list);
    }
    onStep?.(r);
  }
  throw new Error(`engine still busy after ${maxSteps} steps`);
}

export function lastOutput(run: Run, id: string): RequestOutput {
  const list = run.outputs.get(id);
  if (!list || list.length === 0) throw new Error(`no output for ${id}`);
  return list[list.length - 1];
}
