/**
 * What the streamed and the plain answer both derive from a choice's engine steps: its finish
 * reason, its tool call's index and id, and the logprobs of its tokens. One set of rules, so
 * the two answers to the same request carry the same content.
 */

import { randomUUID } from "node:crypto";
import type { FinishReason } from "../engine/types.ts";
import { listedFor, type TokenLogprob, tokenLogprob } from "./logprobs.ts";
import type { ChoiceFinish } from "./openai-shapes.ts";
import type { ChoicePlan, GenerationSpec } from "./prepare-generation.ts";
import type { ChoiceStep } from "./track-generation.ts";

/**
 * A cut answer is `length` (`stop` for a text answer asked to end there: `lengthIsStop`); a whole tool call is `tool_calls` when the model chose or was
 * required to call, and `stop` when the request named the function. (vLLM itself is not
 * consistent here: its stream says `tool_calls` for every call, its plain answer says
 * `tool_calls` only for `auto`. The simulated backend gives both answers one rule.)
 */
export function choiceFinish(choice: ChoicePlan, finish: FinishReason): ChoiceFinish {
  if (finish === "length")
    return choice.lengthIsStop && choice.toolCall === null ? "stop" : "length";
  const mode = choice.toolCall?.mode;
  return mode === "auto" || mode === "required" ? "tool_calls" : "stop";
}

/**
 * The `index` of a choice's call in its stream. One call per choice would make it 0, but
 * vLLM numbers the call of a named `tool_choice` by the choice's index instead.
 */
export function toolCallIndex(choice: ChoicePlan): number {
  return choice.toolCall?.mode === "named" ? choice.index : 0;
}

/** vLLM's tool-call id: `chatcmpl-tool-` and 32 hex digits, random per answer. */
export function newToolCallId(): string {
  return `chatcmpl-tool-${randomUUID().replaceAll("-", "")}`;
}

/** The logprobs of a step's tokens; null when the request asked for none. */
export function stepLogprobs(spec: GenerationSpec, step: ChoiceStep): TokenLogprob[] | null {
  if (spec.logprobs === null) return null;
  const listed = listedFor(spec.logprobs);
  return step.pieces.map((token, k) =>
    tokenLogprob(step.choice.key, step.position + k, token, listed),
  );
}
