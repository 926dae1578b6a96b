/**
 * The simulated backend's Anthropic Messages answer, from the engine's steps of the request's
 * one choice: the first step opens the message and its block, every step with text adds a
 * delta, the last closes the block; the message closes once the usage is known. The bytes are
 * messages-events.ts's.
 */
import { type AnswerFields, SIM_BACKEND_FIELDS } from "./answer-fields.ts";
import { newToolCallId } from "./choice-output.ts";
import type { DialectWriter } from "./dialect-answer.ts";
import { createMessagesEvents, textContentJson } from "./messages-events.ts";
import type { GenerationSpec } from "./prepare-generation.ts";

export function createMessagesWriter(
  spec: GenerationSpec,
  fields: AnswerFields = SIM_BACKEND_FIELDS,
): DialectWriter {
  const call = spec.choices[0].toolCall;
  const tool = call === null ? null : { id: newToolCallId(), name: call.name };
  const events = createMessagesEvents(
    { id: spec.meta.id, model: spec.meta.model, inputTokens: spec.promptTokens.length, tool },
    fields,
  );
  let text = "";
  return {
    step(step) {
      let out = step.position === 0 ? events.messageStart() + events.blockStart() : "";
      const piece = step.pieces.join("");
      text += piece;
      if (piece !== "") out += events.blockDelta(JSON.stringify(piece));
      if (step.finish !== null) out += events.blockStop();
      return out;
    },
    finish: (usage, end) => events.messageDelta(usage, end) + events.messageStop(),
    error: (error) => events.error(error),
    body(usage, end) {
      if (tool === null) return events.body(textContentJson(text), usage, end);
      let input: unknown = {};
      try {
        input = JSON.parse(text);
      } catch {
        // cut by max_tokens: no whole input to give
      }
      const content = [{ type: "tool_use", id: tool.id, name: tool.name, input }];
      return events.body(JSON.stringify(content), usage, end);
    },
  };
}
