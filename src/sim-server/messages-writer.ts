/**
 * The Anthropic Messages answer as vLLM writes it (its `message_stream_converter` and
 * `messages_full_converter`): `message_start` with the prompt's `input_tokens`, one content
 * block (`text`, or `tool_use` whose input streams as `input_json_delta` pieces) opened by
 * `content_block_start` and closed by `content_block_stop`, then `message_delta` with the
 * `stop_reason` (`end_turn`, `max_tokens`, `tool_use`) and the usage, then `message_stop`.
 * The message id is the chat completion's (`chatcmpl-…`), as vLLM's is.
 */
import { anthropicErrorType, type MaitredError } from "../errors.ts";
import { newToolCallId } from "./choice-output.ts";
import { type DialectWriter, namedEvent, type TurnEnd } from "./dialect-answer.ts";
import type { UsageCounts } from "./openai-shapes.ts";
import type { GenerationSpec } from "./prepare-generation.ts";

const STOP_REASON: Record<TurnEnd, string> = {
  stop: "end_turn",
  length: "max_tokens",
  tool_calls: "tool_use",
};

export function createMessagesWriter(spec: GenerationSpec): DialectWriter {
  const { id, model } = spec.meta;
  const input = spec.promptTokens.length;
  const call = spec.choices[0].toolCall;
  const toolId = call === null ? null : newToolCallId();
  let text = "";
  // Anthropic counts cache reads apart from `input_tokens` (the prompt is their sum).
  const usageJson = (u: UsageCounts) => {
    const read = u.cachedTokens ?? 0;
    const cached = u.cachedTokens === null ? "" : `,"cache_read_input_tokens":${read}`;
    return `{"input_tokens":${u.promptTokens - read}${cached},"output_tokens":${u.completionTokens}}`;
  };
  const block = () =>
    call === null
      ? '{"type":"text","text":""}'
      : JSON.stringify({ type: "tool_use", id: toolId, name: call.name, input: {} });
  return {
    step(step) {
      let out = "";
      if (step.position === 0) {
        const message = `{"id":${JSON.stringify(id)},"type":"message","role":"assistant","content":[],"model":${JSON.stringify(model)},"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":${input},"output_tokens":0}}`;
        out += namedEvent("message_start", `{"type":"message_start","message":${message}}`);
        out += namedEvent(
          "content_block_start",
          `{"type":"content_block_start","index":0,"content_block":${block()}}`,
        );
      }
      const piece = step.pieces.join("");
      text += piece;
      if (piece !== "") {
        const delta =
          call === null
            ? `{"type":"text_delta","text":${JSON.stringify(piece)}}`
            : `{"type":"input_json_delta","partial_json":${JSON.stringify(piece)}}`;
        out += namedEvent(
          "content_block_delta",
          `{"type":"content_block_delta","index":0,"delta":${delta}}`,
        );
      }
      if (step.finish !== null)
        out += namedEvent("content_block_stop", '{"type":"content_block_stop","index":0}');
      return out;
    },
    finish(usage, end) {
      return (
        namedEvent(
          "message_delta",
          `{"type":"message_delta","delta":{"stop_reason":"${STOP_REASON[end]}","stop_sequence":null},"usage":${usageJson(usage)}}`,
        ) + namedEvent("message_stop", '{"type":"message_stop"}')
      );
    },
    error(error: MaitredError) {
      const body = {
        type: "error",
        error: { type: anthropicErrorType(error.status), message: error.message },
      };
      return namedEvent("error", JSON.stringify(body));
    },
    body(usage, end) {
      let content: unknown[];
      if (call === null) content = text === "" ? [] : [{ type: "text", text }];
      else {
        let input: unknown = {};
        try {
          input = JSON.parse(text);
        } catch {
          // cut by max_tokens: no whole input to give
        }
        content = [{ type: "tool_use", id: toolId, name: call.name, input }];
      }
      return `{"id":${JSON.stringify(id)},"type":"message","role":"assistant","content":${JSON.stringify(content)},"model":${JSON.stringify(model)},"stop_reason":"${STOP_REASON[end]}","stop_sequence":null,"usage":${usageJson(usage)}}`;
    },
  };
}
