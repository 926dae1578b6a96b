import type { ProgramPlan, StepPlan, SubagentPlan, Workload } from "./types.ts";

/**
 * Sub-agents as programs. A parent's step may launch sub-agents (`StepPlan.spawn`, drawn by the
 * generator); a driver makes each a program plan with `subagentPlans` when that step's answer
 * arrives, runs them side by side without a concurrency slot of their own (they belong to their
 * parent's), sends their requests with the parent's id unless the workload says not to
 * (`sendsParentLink`), releases each when it ends, and sends the parent's next call once the
 * last has ended and the step's `toolMs` has passed.
 *
 * The plans are built from the parent's plan as the driver holds it, not stored in it, so what
 * a mix, a class draw or `--unreleased` did to the parent (its id, index, class, system prompt,
 * release) holds for its sub-agents too.
 */

/** The sub-agents launched by the answer of `parent`'s step `stepIndex` (none: empty). */
export function subagentPlans(parent: ProgramPlan, stepIndex: number): ProgramPlan[] {
  const spawn = parent.steps[stepIndex]?.spawn;
  if (spawn === undefined || spawn.length === 0) return [];
  let ordinal = 0;
  for (let i = 0; i < stepIndex; i++) ordinal += parent.steps[i].spawn?.length ?? 0;
  return spawn.map((sub, j) => subagentPlan(parent, stepIndex, ordinal + j, sub));
}

function subagentPlan(
  parent: ProgramPlan,
  spawnStep: number,
  ordinal: number,
  sub: SubagentPlan,
): ProgramPlan {
  const plan: ProgramPlan = {
    programId: `${parent.programId}.c${ordinal}`,
    index: parent.index,
    source: `${parent.source}.c${ordinal}`,
    startOffsetMs: parent.startOffsetMs,
    steps: sub.steps,
    subagent: {
      parentProgramId: parent.programId,
      ordinal,
      spawnStep,
      parentFirstPromptTokens: parent.steps[0].promptTokens,
    },
  };
  // Its parent's client runs it: the same class, system prompt and release behaviour.
  if (parent.priorityClass !== undefined) plan.priorityClass = parent.priorityClass;
  if (parent.systemPrompt !== undefined) plan.systemPrompt = parent.systemPrompt;
  if (parent.unreleased === true) plan.unreleased = true;
  if (parent.textActions === true) plan.textActions = true;
  return plan;
}

/** Sub-agents launched by the whole program. */
export function subagentCount(plan: ProgramPlan): number {
  return plan.steps.reduce((n, s) => n + (s.spawn?.length ?? 0), 0);
}

/** Whether a driver sends a sub-agent's requests with its parent's id. */
export function sendsParentLink(workload: Pick<Workload, "subagentLink">): boolean {
  return workload.subagentLink !== false;
}

/** The workload with `--subagent-link` applied (true or absent: as it is). */
export function withSubagentLink(workload: Workload, link: boolean | undefined): Workload {
  return link === false ? { ...workload, subagentLink: false } : workload;
}

/**
 * A step's sub-agents cut at the context window (`cut` is workload.ts `truncateToContext`): a
 * sub-agent whose first call does not fit is left out, as a harness could not start it; the
 * others end before a call that would not fit. The step itself is returned when nothing changes.
 */
export function fitSpawn(
  step: StepPlan,
  maxContextTokens: number,
  cut: (steps: StepPlan[], max: number) => StepPlan[],
): StepPlan {
  const spawn = step.spawn;
  if (spawn === undefined) return step;
  const fits = (s: StepPlan) => s.promptTokens + s.completionTokens <= maxContextTokens;
  const kept = spawn
    .filter((sub) => fits(sub.steps[0]))
    .map((sub) => {
      const steps = cut(sub.steps, maxContextTokens);
      return steps === sub.steps ? sub : { steps };
    });
  if (kept.length === spawn.length && kept.every((sub, j) => sub === spawn[j])) return step;
  const out: StepPlan = { ...step, spawn: kept };
  if (kept.length === 0) delete out.spawn;
  return out;
}

/** Every tool time of the steps, their sub-agents' included, mapped by `f`. */
export function mapToolTimes(steps: readonly StepPlan[], f: (ms: number) => number): StepPlan[] {
  return steps.map((s) => {
    const out: StepPlan = { ...s, toolMs: f(s.toolMs) };
    if (s.spawn !== undefined) {
      out.spawn = s.spawn.map((sub) => ({ steps: mapToolTimes(sub.steps, f) }));
    }
    return out;
  });
}
