/**
 * The SSE answer: one chunk per choice per engine step, as vLLM streams `n` choices. Chat
 * sends every choice's role chunk when the request's first output arrives, then each step's
 * text or tool-call piece; the usage chunk (`include_usage`) closes the stream once every
 * choice has finished. A client that goes away aborts the engine requests, through the
 * stream's `cancel` or the request's AbortSignal.
 */

import { errorBodyJson } from "../errors.ts";
import { choiceFinish, newToolCallId, stepLogprobs, toolCallIndex } from "./choice-output.ts";
import { streamGeneration } from "./generation-io.ts";
import { chatLogprobsJson, completionLogprobsJson, textLength } from "./logprobs.ts";
import {
  type ChunkChoice,
  type ChunkWriter,
  createChunkWriter,
  SSE_DONE,
  sseEvent,
  type UsageCounts,
} from "./openai-shapes.ts";
import type { GenerationSpec } from "./prepare-generation.ts";
import type { ChoiceStep, GenerationDeps } from "./track-generation.ts";

/** Turns one choice's step into its chunk; keeps the completions text offsets per choice. */
function createStepChunks(spec: GenerationSpec, writer: ChunkWriter) {
  const chat = spec.meta.endpoint === "chat";
  const offsets = new Array<number>(spec.choices.length).fill(0);
  const running = (completionTokens: number): UsageCounts | null =>
    spec.continuousUsageStats
      ? { promptTokens: spec.promptTokens.length, completionTokens, cachedTokens: null }
      : null;

  return {
    roles: () => spec.choices.map((c) => writer.role(running(0), c.index)).join(""),
    chunk(step: ChoiceStep): string {
      const { choice, position, pieces } = step;
      const entries = stepLogprobs(spec, step);
      let logprobs: string | null = null;
      if (entries !== null && spec.logprobs !== null) {
        logprobs = chat
          ? chatLogprobsJson(entries, spec.logprobs)
          : completionLogprobsJson(entries, spec.logprobs, offsets[choice.index]);
        offsets[choice.index] += textLength(entries);
      }
      const c: ChunkChoice = { index: choice.index, logprobs };
      const finish = step.finish === null ? null : choiceFinish(choice, step.finish);
      const usage = running(position + pieces.length);
      const text = pieces.join("");
      const call = choice.toolCall;
      if (call === null) return writer.delta(text, finish, usage, c);
      const head = position === 0 ? { id: newToolCallId(), name: call.name } : null;
      return writer.toolCall(
        { index: toolCallIndex(choice), head, arguments: text },
        finish,
        usage,
        c,
      );
    },
  };
}

export function streamResponse(
  signal: AbortSignal,
  spec: GenerationSpec,
  deps: GenerationDeps,
  headers: Record<string, string>,
): Response {
  const writer = createChunkWriter(spec.meta);
  const chunks = createStepChunks(spec, writer);
  const chat = spec.meta.endpoint === "chat";
  return streamGeneration(signal, spec, deps, headers, {
    step: (step, first) => (first && chat ? chunks.roles() : "") + chunks.chunk(step),
    finished: (usage) => (spec.includeUsage ? writer.usage(usage) : "") + SSE_DONE,
    // vLLM sends a mid-stream error as one data event, then [DONE].
    fail: (error) => sseEvent(errorBodyJson(error, "status")) + SSE_DONE,
  });
}
