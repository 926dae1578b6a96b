import { ConfigError } from "../errors.ts";
import { drawClass } from "./class-mix.ts";
import { addSubagents, generateSteps, sampleToolMs } from "./generator.ts";
import { createMixWorkload, type MixOptions } from "./mix-workload.ts";
import { PRESETS, presetNames } from "./presets.ts";
import { createRng, deriveSeed, permutation } from "./prng.ts";
import { fitSpawn, withSubagentLink } from "./subagents.ts";
import type { TraceProgram } from "./trace-parser.ts";
import type { ProgramPlan, SingleWorkloadSpec, StepPlan, Workload, WorkloadSpec } from "./types.ts";

/**
 * Resolve a workload description to an endless, deterministic program sequence. Pure: the
 * caller supplies parsed trace programs (see load-workload.ts for the file side), so the live
 * driver and the simulator get identical plans from identical (spec, seed).
 */

export const DEFAULT_SEED = 1;
/** Gap between program start offsets: a C = 96 ramp takes ≈ 10 s (*assumption*). */
export const DEFAULT_STAGGER_MS = 100;
/** mini-swe-agent shares only the system line and tool schema (≈ 200 tokens). */
export const DEFAULT_TRACE_SHARED_PREFIX = 200;
/** Stream tags for deriveSeed, so each use of the seed draws from its own stream. */
const STREAM_ORDER = 1;
const STREAM_PROGRAM = 2;
const STREAM_TOOL = 3;
/** A program's sub-agents (mix-workload.ts uses 4, class-mix.ts 5, unreleased.ts 6). */
const STREAM_SUBAGENTS = 7;

/** The swe-bash tool model fills `tool_ms` a trace lacks. */
const FALLBACK_TOOL = PRESETS["swe-bash"].tool;

function traceSteps(program: TraceProgram, seed: number, base: number): StepPlan[] {
  const rng = createRng(deriveSeed(seed, STREAM_TOOL, base));
  const last = program.steps.length - 1;
  return program.steps.map((s, i): StepPlan => {
    // max_tokens must be ≥ 1; a zero-length output is replayed as one token.
    const step: StepPlan = {
      promptTokens: s.promptTokens,
      completionTokens: Math.max(1, s.completionTokens),
      toolMs: 0,
    };
    if (i === last) return step;
    if (s.toolMs !== undefined) step.toolMs = Math.round(s.toolMs);
    else if (s.humanMs !== undefined) {
      step.toolMs = Math.round(s.humanMs);
      step.human = true;
    } else step.toolMs = sampleToolMs(FALLBACK_TOOL, rng);
    return step;
  });
}

function traceWorkload(
  spec: Extract<WorkloadSpec, { kind: "trace" }>,
  programs: readonly TraceProgram[],
  name: string,
): Omit<Workload, "programAt"> & {
  base(i: number): { source: string; steps: StepPlan[] };
  textActions: boolean;
} {
  const seed = spec.seed ?? DEFAULT_SEED;
  const order = permutation(programs.length, createRng(deriveSeed(seed, STREAM_ORDER)));
  const size = Math.min(order.length, spec.limit ?? order.length);
  if (size < 1) throw new ConfigError("limit", "must be at least 1");
  return {
    name,
    seed,
    sharedPrefixTokens: spec.sharedPrefixTokens ?? DEFAULT_TRACE_SHARED_PREFIX,
    size,
    // The trace format carries no tool-call flag; the shipped traces are mini-swe-agent runs,
    // whose actions are bash blocks in the answer's text.
    textActions: true,
    base: (i) => {
      const b = order[i % size];
      return { source: programs[b].id, steps: traceSteps(programs[b], seed, b) };
    },
  };
}

/**
 * `programs` is required for trace specs (the parsed file) and ignored for presets. `name`
 * overrides the trace's display name (default: the spec's `file`). A mix is built here only
 * when every component is a preset; load-workload.ts `loadWorkload` builds any mix.
 */
export function createWorkload(
  spec: WorkloadSpec,
  programs?: readonly TraceProgram[],
  name?: string,
): Workload {
  const staggerMs = spec.staggerMs ?? DEFAULT_STAGGER_MS;
  if (!(staggerMs >= 0)) throw new ConfigError("staggerMs", "must be ≥ 0");
  if (spec.kind === "mix") {
    const parts = spec.components.map((c) => {
      if (c.spec.kind !== "preset") {
        throw new ConfigError("workload", `mix component ${c.name} is a trace: use loadWorkload`);
      }
      return { ...c, workload: createWorkload(componentSpecOf(spec, c.spec)) };
    });
    return withSubagentLink(createMixWorkload(parts, mixOptionsOf(spec)), spec.subagentLink);
  }
  let inner: ReturnType<typeof traceWorkload>;
  if (spec.kind === "trace") {
    if (!programs) throw new ConfigError("workload", `trace ${spec.file} was not loaded`);
    inner = traceWorkload(spec, programs, name ?? spec.file);
  } else {
    const params = PRESETS[spec.name];
    if (!params) {
      throw new ConfigError(
        "workload",
        `unknown preset "${spec.name}" (${presetNames().join(", ")})`,
      );
    }
    const seed = spec.seed ?? DEFAULT_SEED;
    inner = {
      name: params.name,
      seed,
      sharedPrefixTokens: params.sharedPrefixTokens,
      size: Number.POSITIVE_INFINITY,
      ...(params.subagents === undefined
        ? {}
        : { subagentsAtOnce: params.subagents.countWeights.length }),
      textActions: params.textActions === true,
      base: (i) => {
        const steps = generateSteps(params, createRng(deriveSeed(seed, STREAM_PROGRAM, i)));
        const sub = params.subagents;
        return {
          source: `${params.name}#${i}`,
          steps:
            sub === undefined
              ? steps
              : addSubagents(sub, steps, createRng(deriveSeed(seed, STREAM_SUBAGENTS, i))),
        };
      },
    };
  }
  const { base, textActions, ...rest } = inner;
  const classMix = spec.classMix !== undefined && spec.classMix.length > 0 ? spec.classMix : null;
  const workload: Workload = {
    ...rest,
    programAt(index: number): ProgramPlan {
      if (!Number.isInteger(index) || index < 0) throw new RangeError(`bad program index ${index}`);
      const { source, steps: all } = base(index);
      const steps = spec.maxContextTokens ? truncateToContext(all, spec.maxContextTokens) : all;
      const cycle = Number.isFinite(rest.size) ? Math.floor(index / rest.size) : 0;
      const plan: ProgramPlan = {
        programId: `p${index}`,
        index,
        source: cycle > 0 ? `${source}~${cycle}` : source,
        startOffsetMs: index * staggerMs,
        steps,
      };
      if (classMix !== null) plan.priorityClass = drawClass(classMix, rest.seed, index);
      if (textActions) plan.textActions = true;
      return plan;
    },
  };
  return withSubagentLink(workload, spec.subagentLink);
}

/**
 * A mix component's spec with the mix's seed, stagger and context limit: the mix's common
 * fields govern its components (a caller changing the mix's seed changes theirs).
 */
export function componentSpecOf(
  mix: Extract<WorkloadSpec, { kind: "mix" }>,
  spec: SingleWorkloadSpec,
): SingleWorkloadSpec {
  const out: SingleWorkloadSpec = { ...spec, seed: mix.seed, staggerMs: mix.staggerMs };
  delete out.classMix;
  if (mix.maxContextTokens === undefined) delete out.maxContextTokens;
  else out.maxContextTokens = mix.maxContextTokens;
  return out;
}

/** What a mix takes from its spec (components get seed, stagger and context from it too). */
export function mixOptionsOf(spec: WorkloadSpec): MixOptions {
  return {
    seed: spec.seed ?? DEFAULT_SEED,
    staggerMs: spec.staggerMs ?? DEFAULT_STAGGER_MS,
    classMix: spec.classMix,
  };
}

/**
 * Cut a program at the model's context window: an agent whose next call would not fit ends
 * there (as a harness stops at its context limit). A first call that does not fit is shrunk
 * to fit, so every program keeps at least one step. Sub-agents are cut the same way, and one
 * whose first call does not fit is left out (subagents.ts `fitSpawn`); the last step kept
 * launches none (nothing would read their results).
 */
export function truncateToContext(steps: StepPlan[], maxContextTokens: number): StepPlan[] {
  const fits = (s: StepPlan) => s.promptTokens + s.completionTokens <= maxContextTokens;
  let n = 0;
  while (n < steps.length && fits(steps[n])) n++;
  if (n === steps.length) {
    const fitted = steps.map((s) => fitSpawn(s, maxContextTokens, truncateToContext));
    return fitted.every((s, i) => s === steps[i]) ? steps : fitted;
  }
  if (n === 0) {
    const completion = Math.max(
      1,
      Math.min(steps[0].completionTokens, Math.floor(maxContextTokens / 4)),
    );
    return [
      {
        promptTokens: Math.max(1, maxContextTokens - completion),
        completionTokens: completion,
        toolMs: 0,
      },
    ];
  }
  const kept = steps.slice(0, n).map((s) => fitSpawn(s, maxContextTokens, truncateToContext));
  kept[n - 1] = {
    promptTokens: kept[n - 1].promptTokens,
    completionTokens: kept[n - 1].completionTokens,
    toolMs: 0,
  };
  return kept;
}

/** The first `count` programs, for callers that want a finite list. */
export function programPlans(workload: Workload, count: number): ProgramPlan[] {
  return Array.from({ length: count }, (_, i) => workload.programAt(i));
}
