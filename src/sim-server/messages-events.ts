/**
 * The Anthropic Messages answer as vLLM writes it, streamed and whole: `message_start` with the prompt's `input_tokens`, one content
 * block (`text`, or `tool_use` whose input streams as `input_json_delta` pieces) opened by
 * `content_block_start` and closed by `content_block_stop`, then `message_delta` with the
 * `stop_reason` (`end_turn`, `max_tokens`, `tool_use`) and the usage, then `message_stop`.
 * The message id is the chat completion's (`chatcmpl-…`), as vLLM's is.
 *
 * This file writes each event and the plain body, for the simulated backend
 * (messages-writer.ts writes them from the engine's steps) and the vLLM-like upstream
 * (src/bench/upstream, one event per token) alike.
 */
import { anthropicErrorType, type MaitredError } from "../errors.ts";
import { type AnswerFields, SIM_BACKEND_FIELDS } from "./answer-fields.ts";
import type { TurnEnd } from "./dialect-answer.ts";
import { namedEvent, type UsageCounts } from "./openai-shapes.ts";

const STOP_REASON: Record<TurnEnd, string> = {
  stop: "end_turn",
  length: "max_tokens",
  tool_calls: "tool_use",
};

/** What a Messages answer's events say besides its tokens. */
export interface MessagesMeta {
  id: string;
  model: string;
  inputTokens: number;
  /** The `tool_use` block the answer is; null for a `text` block. */
  tool: { id: string; name: string } | null;
}

/** The events of one Messages answer, each written whole (`event:` and `data:` lines). */
export interface MessagesEvents {
  messageStart(): string;
  blockStart(): string;
  /** One piece of the block, given as a JSON string (quoted and escaped). */
  blockDelta(pieceJson: string): string;
  blockStop(): string;
  messageDelta(usage: UsageCounts, end: TurnEnd): string;
  messageStop(): string;
  /** The error event that ends a stream that failed. */
  error(error: MaitredError): string;
  /** The plain answer, its `content` given as JSON. */
  body(contentJson: string, usage: UsageCounts, end: TurnEnd): string;
}

const BLOCK_STOP = namedEvent("content_block_stop", '{"type":"content_block_stop","index":0}');
const MESSAGE_STOP = namedEvent("message_stop", '{"type":"message_stop"}');
const TEXT_BLOCK_START = namedEvent(
  "content_block_start",
  '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
);

/** The `content` of a plain text answer, as JSON: no block for no text. */
export function textContentJson(text: string): string {
  return text === "" ? "[]" : `[{"type":"text","text":${JSON.stringify(text)}}]`;
}

export function createMessagesEvents(
  meta: MessagesMeta,
  fields: AnswerFields = SIM_BACKEND_FIELDS,
): MessagesEvents {
  const { tool } = meta;
  const id = JSON.stringify(meta.id);
  const model = JSON.stringify(meta.model);
  // Anthropic counts cache reads apart from `input_tokens` (the prompt is their sum).
  const usageJson = (u: UsageCounts) => {
    const read = u.cachedTokens ?? 0;
    const cached = u.cachedTokens === null ? "" : `,"cache_read_input_tokens":${read}`;
    return `{"input_tokens":${u.promptTokens - read}${cached},"output_tokens":${u.completionTokens}}`;
  };
  const stopSequence = fields.stopSequence ? ',"stop_sequence":null' : "";
  // Every delta is the same event around its piece: its two ends are built once.
  const deltaHead = `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"${tool === null ? "text_delta" : "input_json_delta"}","${tool === null ? "text" : "partial_json"}":`;
  const deltaTail = "}}\n\n";
  return {
    messageStart: () =>
      namedEvent(
        "message_start",
        `{"type":"message_start","message":{"id":${id},"type":"message","role":"assistant","content":[],"model":${model},"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":${meta.inputTokens},"output_tokens":0}}}`,
      ),
    blockStart: () =>
      tool === null
        ? TEXT_BLOCK_START
        : namedEvent(
            "content_block_start",
            `{"type":"content_block_start","index":0,"content_block":${JSON.stringify({ type: "tool_use", id: tool.id, name: tool.name, input: {} })}}`,
          ),
    blockDelta: (pieceJson) => deltaHead + pieceJson + deltaTail,
    blockStop: () => BLOCK_STOP,
    messageDelta: (usage, end) =>
      namedEvent(
        "message_delta",
        `{"type":"message_delta","delta":{"stop_reason":"${STOP_REASON[end]}"${stopSequence}},"usage":${usageJson(usage)}}`,
      ),
    messageStop: () => MESSAGE_STOP,
    error: (error) =>
      namedEvent(
        "error",
        JSON.stringify({
          type: "error",
          error: { type: anthropicErrorType(error.status), message: error.message },
        }),
      ),
    body: (contentJson, usage, end) =>
      `{"id":${id},"type":"message","role":"assistant","content":${contentJson},"model":${model},"stop_reason":"${STOP_REASON[end]}"${stopSequence},"usage":${usageJson(usage)}}`,
  };
}
