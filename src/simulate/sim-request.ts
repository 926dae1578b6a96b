import type { PriorityClass } from "../core/priority/priority-classes.ts";
import type { MaitredError } from "../errors.ts";

/** A program's request as the simulator runtime (sim-runtime.ts) takes it, and its answer. */

export type RequestResult =
  | {
      ok: true;
      promptTokens: number;
      cachedTokens: number;
      completionTokens: number;
      outputIds: number[];
      /** How long the core held the request before dispatch (ms). */
      pausedMs: number;
      /** When the first output token was delivered (`nowMs()`), after the first-byte commit. */
      firstTokenMs?: number;
    }
  | { ok: false; error: MaitredError };

export interface SimRequest {
  id: string;
  programId: string;
  /** A sub-agent's parent, named on every request (as `x-parent-program-id`); absent = none. */
  parentProgramId?: string;
  /** Prompt token ids; not copied, must not change while the request lives. */
  tokens: number[];
  messageChars: number[];
  maxTokens: number;
  /** The class the program asks for (as `x-priority`); absent = none. */
  priorityClass?: PriorityClass;
  /** Its answer ends with `finish_reason: "stop"` and no tool call (workload `answerStops`). */
  answerStops?: boolean;
  /** Called once, when the request ends (answered, rejected or cancelled). */
  onDone(result: RequestResult): void;
}
