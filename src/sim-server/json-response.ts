/**
 * The plain JSON answer: every choice's steps collected, then one body with the choices in
 * index order once the last has finished. It is built from the same steps and rules as the
 * stream, so the two answers to one request differ only in id, `created` and tool-call ids.
 * A client that goes away aborts the engine requests through the request's AbortSignal.
 */

import { choiceFinish, newToolCallId, stepLogprobs } from "./choice-output.ts";
import { collectGeneration } from "./generation-io.ts";
import { chatLogprobsJson, completionLogprobsJson, type TokenLogprob } from "./logprobs.ts";
import type { ChoiceFinish, ChoiceResult } from "./openai-shapes.ts";
import { completionResponseBody } from "./openai-shapes.ts";
import type { ChoicePlan, GenerationSpec } from "./prepare-generation.ts";
import type { ChoiceStep, GenerationDeps } from "./track-generation.ts";

interface Collected {
  pieces: string[];
  logprobs: TokenLogprob[];
  finish: ChoiceFinish;
}

function collect(spec: GenerationSpec, into: Collected[], step: ChoiceStep): void {
  const c = into[step.choice.index];
  for (const piece of step.pieces) c.pieces.push(piece);
  for (const entry of stepLogprobs(spec, step) ?? []) c.logprobs.push(entry);
  if (step.finish !== null) c.finish = choiceFinish(step.choice, step.finish);
}

/**
 * vLLM's plain answer beside a tool call: content null when the model chose to call (`auto`),
 * "" when the request forced the call.
 */
function result(spec: GenerationSpec, choice: ChoicePlan, c: Collected): ChoiceResult {
  const text = c.pieces.join("");
  let logprobs: string | null = null;
  if (spec.logprobs !== null) {
    logprobs =
      spec.meta.endpoint === "chat"
        ? chatLogprobsJson(c.logprobs, spec.logprobs)
        : completionLogprobsJson(c.logprobs, spec.logprobs, 0);
  }
  const call = choice.toolCall;
  if (call === null)
    return { index: choice.index, text, toolCall: null, logprobs, finish: c.finish };
  return {
    index: choice.index,
    text: call.mode === "auto" ? null : "",
    toolCall: { id: newToolCallId(), name: call.name, arguments: text },
    logprobs,
    finish: c.finish,
  };
}

export function jsonResponse(
  signal: AbortSignal,
  spec: GenerationSpec,
  deps: GenerationDeps,
  headers: Record<string, string>,
): Promise<Response> {
  const collected: Collected[] = spec.choices.map(() => ({
    pieces: [],
    logprobs: [],
    finish: "stop",
  }));
  return collectGeneration(
    signal,
    spec,
    deps,
    headers,
    (step) => collect(spec, collected, step),
    (usage) => {
      const choices = spec.choices.map((c) => result(spec, c, collected[c.index]));
      return completionResponseBody(spec.meta, choices, usage);
    },
  );
}
