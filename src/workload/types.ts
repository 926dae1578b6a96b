import type { PriorityClass } from "../core/priority/priority-classes.ts";

/**
 * The workload contract shared by the live driver (`maitred bench`) and the virtual-time
 * simulator (`maitred simulate`): one description resolves to the same program plans in both.
 */

/** One LLM call of an agent program, then the gap before the next call. */
export interface StepPlan {
  /** Full prompt of this call (the whole conversation so far), chat template included. */
  promptTokens: number;
  /** Output length of this call (sent as `max_tokens` with `ignore_eos`). */
  completionTokens: number;
  /** Tool (or human) time after this call's response, before the next call; 0 on the last step. */
  toolMs: number;
  /** The gap is a human turn rather than a tool call (interactive presets only). */
  human?: boolean;
}

export interface ProgramPlan {
  /** Unique within the workload: `p<index>`. Drivers may prefix it with a run tag. */
  programId: string;
  /** Position in the workload's program sequence (seeds the program's text). */
  index: number;
  /** Where the program came from: a trace line id or `<preset>#<index>`. */
  source: string;
  /**
   * Earliest start, ms after the run starts. A closed-loop driver starts program i at
   * max(startOffsetMs, the moment a concurrency slot frees), so the first C programs ramp up
   * staggered and an infinite concurrency turns the same plan into an open-loop arrival list.
   */
  startOffsetMs: number;
  steps: StepPlan[];
  /**
   * The program's priority class (sent as `x-priority` by the bench, `priorityClass` on
   * `request_arrived` by the simulator); absent = no class asked for (the router's `default`).
   */
  priorityClass?: PriorityClass;
  /**
   * The system prompt of this program's own workload when it differs from the workload's (a mix
   * component): its length, and a tag that gives each component its own prompt text.
   */
  systemPrompt?: { tokens: number; tag: number };
  /**
   * Its client never releases it when it ends (`--unreleased`): the router keeps it until its
   * idle timeout (unreleased.ts).
   */
  unreleased?: true;
  /**
   * Its agent writes its actions as text (mini-swe-agent's bash blocks), not as tool calls: every
   * answer ends with `finish_reason: "stop"`. Otherwise only its last answer and its replies to
   * a human (`StepPlan.human`) do (`answerStops`).
   */
  textActions?: true;
}

export interface WorkloadCommon {
  /** Seeds program order, sampled quantities and generated text. */
  seed?: number;
  /** Gap between consecutive program start offsets (ms). */
  staggerMs?: number;
  /** The model's context window: a program ends before a call that would not fit. */
  maxContextTokens?: number;
  /** Every tool (and human) time multiplied by this (`--tool-time-scale`; default 1). */
  toolTimeScale?: number;
  /**
   * Classes drawn per program (seeded, deterministic: class-mix.ts), for programs whose mix
   * component names none. Absent = no class.
   */
  classMix?: readonly ClassShare[];
  /** Share of programs (0–1, drawn per program by seed) whose client never releases them. */
  unreleased?: number;
}

/** One class of a `--class-mix`, with its weight (weights are normalised). */
export interface ClassShare {
  priorityClass: PriorityClass;
  weight: number;
}

/** A workload without mixing: a trace or a preset. */
export type SingleWorkloadSpec = Extract<WorkloadSpec, { kind: "trace" | "preset" }>;

/** One part of a mix: a workload, its share of the closed loop's slots, and its class. */
export interface MixComponentSpec {
  /** The component as written (`chat`, `deepseek`, a path). */
  name: string;
  spec: SingleWorkloadSpec;
  weight: number;
  priorityClass?: PriorityClass;
}

export type WorkloadSpec =
  | (WorkloadCommon & {
      kind: "trace";
      /** A shipped trace name (`deepseek`, `gemini`) or a path to a JSONL trace file. */
      file: string;
      /** Use at most this many programs of the file (after the seeded shuffle). */
      limit?: number;
      /** Tokens of system prompt shared by all programs (200). */
      sharedPrefixTokens?: number;
    })
  | (WorkloadCommon & {
      kind: "preset";
      name: string;
    })
  | (WorkloadCommon & {
      /** Several workloads side by side (mix-workload.ts): `mix:chat@interactive=0.2,...`. */
      kind: "mix";
      components: readonly MixComponentSpec[];
    });

/** A resolved workload: an endless, deterministic sequence of programs. */
export interface Workload {
  /** Human name: the preset name or the trace file's base name. */
  name: string;
  seed: number;
  /** Tokens of the system prompt every program of this workload shares. */
  sharedPrefixTokens: number;
  /**
   * Distinct base programs: a trace's line count (`programAt(i)` for i ≥ size replays them
   * again under new ids), Infinity for a preset (every index is a fresh sample).
   */
  size: number;
  programAt(index: number): ProgramPlan;
  /** Share of programs marked `unreleased` (unreleased.ts); absent = none. */
  unreleased?: number;
  /** Present on mixed workloads: closed-loop drivers give each slot one component. */
  mix?: WorkloadMix;
}

export interface MixComponent {
  name: string;
  weight: number;
  priorityClass?: PriorityClass;
  workload: Workload;
}

export interface WorkloadMix {
  readonly components: readonly MixComponent[];
  /** The component of each of `concurrency` closed-loop slots (mix-workload.ts). */
  slots(concurrency: number): number[];
  /**
   * The `n`-th program of component `c`, launched as the mix's `index`-th program (its id,
   * text seed and start offset).
   */
  programOf(c: number, n: number, index: number): ProgramPlan;
}

/**
 * Whether step `i`'s answer ends with `finish_reason: "stop"` and no tool call: the last answer,
 * a reply to a human, or any answer of an agent that writes its actions as text.
 */
export function answerStops(plan: ProgramPlan, i: number): boolean {
  return plan.textActions === true || i === plan.steps.length - 1 || plan.steps[i].human === true;
}
