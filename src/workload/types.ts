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
  /**
   * Sub-agents this call's answer launches (as Claude Code's Task tool does): they all start
   * when the answer arrives and run side by side while this program waits; `toolMs` then counts
   * from the moment the last of them ended (the parent taking in their results). A driver turns
   * them into programs with `subagentPlans` (subagents.ts). Never on the last step, nor on one
   * followed by a human turn.
   */
  spawn?: readonly SubagentPlan[];
}

/** A sub-agent as its parent's step plans it: its own calls, in the parent's workload. */
export interface SubagentPlan {
  /**
   * Its calls. Step 0's prompt opens with its parent's first prompt (system prompt and task,
   * token for token) and adds the sub-agent's own brief (conversation.ts); later steps grow
   * from there as any program's do. A sub-agent launches none of its own.
   */
  steps: StepPlan[];
}

/** What a sub-agent's program plan knows of its parent (subagents.ts). */
export interface SubagentOf {
  /** The parent's `programId`, as its plan has it (drivers add their run prefix to both). */
  parentProgramId: string;
  /** Its number among its parent's sub-agents in launch order: id `<parent>.c<ordinal>`. */
  ordinal: number;
  /** The parent's step whose answer launched it. */
  spawnStep: number;
  /** The parent's first prompt, whose messages this sub-agent's conversation opens with. */
  parentFirstPromptTokens: number;
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
  /**
   * Present on a sub-agent (built by `subagentPlans` from its parent's `StepPlan.spawn`): it
   * shares its parent's index, class, system prompt and release behaviour, runs in its parent's
   * concurrency slot, and its text is seeded by (index, ordinal).
   */
  subagent?: SubagentOf;
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
  /**
   * Whether sub-agents' requests name their parent (`x-parent-program-id`, `parentProgramId`);
   * false sends them as unrelated programs, so the same workload shows what a router gains by
   * knowing the tree (`--subagent-link off`). Default true.
   */
  subagentLink?: boolean;
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
  /** false: drivers send sub-agents without their parent's id (`WorkloadCommon.subagentLink`). */
  subagentLink?: false;
  /**
   * Most sub-agents one step launches; absent = the workload has none. A program then has up to
   * this many requests in flight at once rather than one (it waits while they run): what sizes
   * anything reserved per program, such as a connection pool or an unbounded KV cache.
   */
  subagentsAtOnce?: number;
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
