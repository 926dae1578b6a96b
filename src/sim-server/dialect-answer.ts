/**
 * The answer of a Messages or Responses request, streamed or whole, from the same engine steps
 * as a chat completion's (one choice: neither API has `n`). A dialect's writer
 * (messages-writer.ts, responses-writer.ts) turns the steps into its events (`event: <type>`
 * then `data: <json>`, as vLLM writes both APIs' streams) and its whole body; this file drives
 * the generation and delivers one or the other.
 */

import type { FinishReason } from "../engine/types.ts";
import type { MaitredError } from "../errors.ts";
import { choiceFinish } from "./choice-output.ts";
import { collectGeneration, streamGeneration } from "./generation-io.ts";
import type { UsageCounts } from "./openai-shapes.ts";
import type { GenerationSpec } from "./prepare-generation.ts";
import type { ChoiceStep, GenerationDeps } from "./track-generation.ts";

/** How the answer ended, in the chat API's words (each dialect names it its own way). */
export type TurnEnd = "stop" | "length" | "tool_calls";

export interface DialectWriter {
  /** Events of one step (the first step opens the message, and its output block). */
  step(step: ChoiceStep): string;
  /** Events that close the answer. */
  finish(usage: UsageCounts, end: TurnEnd): string;
  /** The error event that ends a stream that failed. */
  error(error: MaitredError): string;
  /** The whole answer's JSON, once finished. */
  body(usage: UsageCounts, end: TurnEnd): string;
}

/** A called tool ends as `tool_calls` unless cut by the length, as chat's stream says. */
function turnEnd(step: ChoiceStep, finish: FinishReason): TurnEnd {
  const end = choiceFinish(step.choice, finish);
  if (end === "length") return "length";
  return step.choice.toolCall !== null ? "tool_calls" : "stop";
}

export function dialectAnswer(
  signal: AbortSignal,
  spec: GenerationSpec,
  deps: GenerationDeps,
  headers: Record<string, string>,
  writer: DialectWriter,
): Response | Promise<Response> {
  let end: TurnEnd = "stop";
  const onStep = (step: ChoiceStep): string => {
    if (step.finish !== null) end = turnEnd(step, step.finish);
    return writer.step(step);
  };
  if (!spec.stream) {
    const build = (usage: UsageCounts) => writer.body(usage, end);
    return collectGeneration(signal, spec, deps, headers, onStep, build);
  }
  return streamGeneration(signal, spec, deps, headers, {
    step: onStep,
    finished: (usage) => writer.finish(usage, end),
    fail: (error) => writer.error(error),
  });
}
