/**
 * vLLM's response bodies, byte for byte (streaming and non-streaming).
 * Chat chunks are dumped with `exclude_unset` (only set keys), completion chunks with every
 * field, full responses with every field (nulls included). Strings are assembled around a
 * per-request prefix so each streamed token costs one `JSON.stringify` of its text.
 *
 * Every chunk carries one choice, named by its `index`. A streamed tool call is vLLM's
 * structured-output stream: the first step's delta holds the call's id, type, index and
 * function name with the first piece of the arguments, each later step one more piece.
 */

import type { FinishReason } from "../engine/types.ts";

/** A choice's finish reason: the engine's, or `tool_calls` for a call the model chose. */
export type ChoiceFinish = Exclude<FinishReason, "abort"> | "tool_calls";

export const SSE_DONE = "data: [DONE]\n\n";
export const SSE_CONTENT_TYPE = "text/event-stream; charset=utf-8";

export function sseEvent(json: string): string {
  return `data: ${json}\n\n`;
}

export type Endpoint = "chat" | "completion";

export interface ResponseMeta {
  endpoint: Endpoint;
  id: string;
  created: number;
  model: string;
}

export interface UsageCounts {
  promptTokens: number;
  completionTokens: number;
  /** Reported only with --enable-prompt-tokens-details; null = leave out. */
  cachedTokens: number | null;
}

/** Key order is pydantic's field order: prompt, total, completion. */
function usageBody(u: UsageCounts, nullDetails: boolean): string {
  const head = `{"prompt_tokens":${u.promptTokens},"total_tokens":${u.promptTokens + u.completionTokens},"completion_tokens":${u.completionTokens}`;
  if (u.cachedTokens !== null)
    return `${head},"prompt_tokens_details":{"cached_tokens":${u.cachedTokens}}}`;
  return nullDetails ? `${head},"prompt_tokens_details":null}` : `${head}}`;
}

/** Where a chunk's choice sits and what rides along with its tokens. */
export interface ChunkChoice {
  index: number;
  /** The logprobs JSON of the chunk's tokens; null prints `null`. */
  logprobs: string | null;
}

/** One step of a streamed tool call; the first carries the call's id and function name. */
export interface ToolCallDelta {
  /** The call's `index`. */
  index: number;
  head: { id: string; name: string } | null;
  arguments: string;
}

export interface ChunkWriter {
  /** Chat only: the `{"role":"assistant","content":""}` chunk of choice `index`. */
  role(usage: UsageCounts | null, index?: number): string;
  /** One step's text, with the finish reason on the last one. */
  delta(
    text: string,
    finish: ChoiceFinish | null,
    usage: UsageCounts | null,
    choice?: ChunkChoice,
  ): string;
  /** Chat only: one step of a tool call's arguments. */
  toolCall(
    call: ToolCallDelta,
    finish: ChoiceFinish | null,
    usage: UsageCounts | null,
    choice: ChunkChoice,
  ): string;
  /** The `include_usage` chunk with `"choices": []`. */
  usage(usage: UsageCounts): string;
}

const FIRST_CHOICE: ChunkChoice = { index: 0, logprobs: null };

function toolCallDeltaJson(call: ToolCallDelta): string {
  const args = JSON.stringify(call.arguments);
  // DeltaToolCall's field order is id, type, index, function; unset fields are left out.
  return call.head === null
    ? `{"tool_calls":[{"index":${call.index},"function":{"arguments":${args}}}]}`
    : `{"tool_calls":[{"id":${JSON.stringify(call.head.id)},"type":"function","index":${call.index},"function":{"name":${JSON.stringify(call.head.name)},"arguments":${args}}}]}`;
}

export function createChunkWriter(meta: ResponseMeta): ChunkWriter {
  const chat = meta.endpoint === "chat";
  const object = chat ? "chat.completion.chunk" : "text_completion";
  const prefix = `{"id":${JSON.stringify(meta.id)},"object":"${object}","created":${meta.created},"model":${JSON.stringify(meta.model)},"choices":`;
  // A running usage (continuous_usage_stats) never reports cached tokens. Chat drops an
  // absent usage and the unset details (exclude_unset); completions print every field.
  const tail = (u: UsageCounts | null) => {
    if (u === null) return chat ? "}" : `,"usage":null}`;
    return `,"usage":${usageBody({ ...u, cachedTokens: null }, !chat)}}`;
  };
  const reason = (finish: ChoiceFinish | null) => (finish === null ? "null" : `"${finish}"`);
  const chatChoice = (delta: string, finish: ChoiceFinish | null, c: ChunkChoice) =>
    `{"index":${c.index},"delta":${delta},"logprobs":${c.logprobs ?? "null"},"finish_reason":${reason(finish)}${finish === null ? "" : ',"stop_reason":null'}}`;
  return {
    role: (u, index = 0) =>
      sseEvent(
        `${prefix}[{"index":${index},"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]${tail(u)}`,
      ),
    delta(text, finish, u, c = FIRST_CHOICE) {
      const choice = chat
        ? chatChoice(`{"content":${JSON.stringify(text)}}`, finish, c)
        : `{"index":${c.index},"text":${JSON.stringify(text)},"logprobs":${c.logprobs ?? "null"},"finish_reason":${reason(finish)},"stop_reason":null}`;
      return sseEvent(`${prefix}[${choice}]${tail(u)}`);
    },
    toolCall: (call, finish, u, c) =>
      sseEvent(`${prefix}[${chatChoice(toolCallDeltaJson(call), finish, c)}]${tail(u)}`),
    usage: (u) => sseEvent(`${prefix}[],"usage":${usageBody(u, false)}}`),
  };
}

/** One choice of a plain (non-streamed) answer. */
export interface ChoiceResult {
  index: number;
  /** Chat: the message content (null beside a call the model chose); completions: the text. */
  text: string | null;
  toolCall: { id: string; name: string; arguments: string } | null;
  /** The logprobs JSON of every token; null prints `null`. */
  logprobs: string | null;
  finish: ChoiceFinish;
}

function choiceJson(endpoint: Endpoint, c: ChoiceResult): string {
  const lp = c.logprobs ?? "null";
  if (endpoint === "completion") {
    return `{"index":${c.index},"text":${JSON.stringify(c.text ?? "")},"logprobs":${lp},"finish_reason":"${c.finish}","stop_reason":null,"prompt_logprobs":null}`;
  }
  const call = c.toolCall;
  const calls =
    call === null
      ? "[]"
      : `[{"id":${JSON.stringify(call.id)},"type":"function","function":{"name":${JSON.stringify(call.name)},"arguments":${JSON.stringify(call.arguments)}}}]`;
  return `{"index":${c.index},"message":{"role":"assistant","content":${JSON.stringify(c.text)},"refusal":null,"annotations":null,"audio":null,"function_call":null,"tool_calls":${calls},"reasoning_content":null},"logprobs":${lp},"finish_reason":"${c.finish}","stop_reason":null}`;
}

/** The non-streaming body (full `model_dump()`, v0.11-era fields), choices in index order. */
export function completionResponseBody(
  meta: ResponseMeta,
  choices: readonly ChoiceResult[],
  usage: UsageCounts,
): string {
  const chat = meta.endpoint === "chat";
  const head = `{"id":${JSON.stringify(meta.id)},"object":"${chat ? "chat.completion" : "text_completion"}","created":${meta.created},"model":${JSON.stringify(meta.model)},"choices":[`;
  const body = choices.map((c) => choiceJson(meta.endpoint, c)).join(",");
  const after = chat
    ? `,"prompt_logprobs":null,"kv_transfer_params":null}`
    : `,"kv_transfer_params":null}`;
  return `${head}${body}],"service_tier":null,"system_fingerprint":null,"usage":${usageBody(usage, true)}${after}`;
}

/** The non-streaming body of a single text choice without logprobs. */
export function completionResponseJson(
  meta: ResponseMeta,
  text: string,
  finish: ChoiceFinish,
  usage: UsageCounts,
): string {
  return completionResponseBody(
    meta,
    [{ index: 0, text, toolCall: null, logprobs: null, finish }],
    usage,
  );
}
