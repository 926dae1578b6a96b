import { pickWeighted } from "./class-mix.ts";
import { BRIEF_MESSAGE_OVERHEAD } from "./conversation.ts";
import { sample, sampleInt } from "./distribution.ts";
import type { PresetParams, SubagentParams } from "./presets.ts";
import type { Rng } from "./prng.ts";
import type { StepPlan } from "./types.ts";

/**
 * The parametric agent model, one program at a time:
 *
 *   N ~ round(LN(μ_N, σ_N)) clipped; P0 from the preset (S included or added);
 *   for t in 0..N-1: c_t ~ output model of phase(t); prompt_t = P_t;
 *     if t < N-1: o_t ~ LN(μ_o, σ_o) clipped; P_{t+1} = P_t + a·c_t + o_t;
 *                 T_t ~ tool mixture, capped (or a human gap on `humanGap.share` of steps).
 *
 * Steps are independent given the preset: on the traces every measured lag-1 and cross
 * correlation weak (|r| ≤ 0.23), so the model carries none.
 */

/** Minimum first prompt beyond the shared prefix (a task needs at least one token). */
const MIN_TASK_TOKENS = 1;

/** Thirds of the program: early / mid / late (output length depends on the phase). */
export function phaseOf(t: number, n: number): 0 | 1 | 2 {
  return Math.min(2, Math.floor((3 * t) / n)) as 0 | 1 | 2;
}

export function sampleToolMs(tool: PresetParams["tool"], rng: Rng): number {
  return Math.round(Math.min(tool.capMs, sample(tool.dist, rng)) + tool.overheadMs);
}

export function generateSteps(params: PresetParams, rng: Rng): StepPlan[] {
  const n = sampleInt(params.steps.dist, rng, params.steps.min, params.steps.max);
  const s = params.sharedPrefixTokens;
  const rawP0 = Math.round(sample(params.firstPrompt.dist, rng));
  let prompt = params.firstPrompt.includesShared
    ? Math.max(s + MIN_TASK_TOKENS, rawP0)
    : s + Math.max(MIN_TASK_TOKENS, rawP0);
  const steps: StepPlan[] = [];
  for (let t = 0; t < n; t++) {
    const out = params.output;
    const completion = sampleInt(out.byPhase[phaseOf(t, n)], rng, out.min, out.max);
    if (t === n - 1) {
      steps.push({ promptTokens: prompt, completionTokens: completion, toolMs: 0 });
      break;
    }
    const obs = params.observation;
    const observation = sampleInt(obs.dist, rng, obs.min, obs.max);
    const human = params.humanGap !== undefined && rng.next() < params.humanGap.share;
    const toolMs =
      human && params.humanGap
        ? Math.round(sample(params.humanGap.dist, rng))
        : sampleToolMs(params.tool, rng);
    steps.push(
      human
        ? { promptTokens: prompt, completionTokens: completion, toolMs, human: true }
        : { promptTokens: prompt, completionTokens: completion, toolMs },
    );
    prompt += Math.round(params.keptOutputShare * completion) + observation;
  }
  return steps;
}

/**
 * The sub-agents of a generated program (presets with `subagents`), drawn from a stream of their
 * own after the parent's steps, so the parent's prompts and outputs are those the preset would
 * give without them; only the gaps after launching steps change:
 *
 *   for t in 0..N-2 where step t ends in a tool call (no human turn follows):
 *     with probability spawnShare: k ~ countWeights;
 *       each of the k: n ~ steps; prompt_0 = P_0 of the parent + brief (+ its message overhead);
 *         calls as the generator's, all output kept, tool gaps between them, no human turns;
 *       T_t ~ resume (the parent's gap after the last of them ended).
 *
 * Sub-agents start from the parent's first prompt whatever the step, since it is what they
 * share with it (conversation.ts), and launch none of their own.
 */
export function addSubagents(params: SubagentParams, steps: StepPlan[], rng: Rng): StepPlan[] {
  const parentFirst = steps[0].promptTokens;
  return steps.map((step, t) => {
    if (t === steps.length - 1 || step.human === true) return step;
    if (rng.next() >= params.spawnShare) return step;
    const k = pickWeighted(params.countWeights, rng.next()) + 1;
    const spawn = Array.from({ length: k }, () => ({
      steps: subagentSteps(params, parentFirst, rng),
    }));
    const toolMs = Math.round(Math.min(params.resume.capMs, sample(params.resume.dist, rng)));
    return { ...step, toolMs, spawn };
  });
}

function subagentSteps(p: SubagentParams, parentFirst: number, rng: Rng): StepPlan[] {
  const n = sampleInt(p.steps.dist, rng, p.steps.min, p.steps.max);
  const brief = sampleInt(p.brief.dist, rng, p.brief.min, p.brief.max);
  let prompt = parentFirst + BRIEF_MESSAGE_OVERHEAD + brief;
  const steps: StepPlan[] = [];
  for (let t = 0; t < n; t++) {
    const completion = sampleInt(p.output.dist, rng, p.output.min, p.output.max);
    if (t === n - 1) {
      steps.push({ promptTokens: prompt, completionTokens: completion, toolMs: 0 });
      break;
    }
    const observation = sampleInt(p.observation.dist, rng, p.observation.min, p.observation.max);
    steps.push({
      promptTokens: prompt,
      completionTokens: completion,
      toolMs: sampleToolMs(p.tool, rng),
    });
    prompt += completion + observation;
  }
  return steps;
}
