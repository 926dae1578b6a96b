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
}

export interface WorkloadCommon {
  /** Seeds program order, sampled quantities and generated text. */
  seed?: number;
  /** Gap between consecutive program start offsets (ms). */
  staggerMs?: number;
  /** The model's context window: a program ends before a call that would not fit. */
  maxContextTokens?: number;
}

export type WorkloadSpec =
  | (WorkloadCommon & {
      kind: "trace";
      /** A shipped trace name (`deepseek`, `gemini`) or a path to a JSONL trace file. */
      file: string;
      /** Use at most this many programs of the file (after the seeded shuffle). */
      limit?: number;
      /** Tokens of system prompt shared by all programs (agent-workloads.md §5: 200). */
      sharedPrefixTokens?: number;
    })
  | (WorkloadCommon & {
      kind: "preset";
      name: string;
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
}
