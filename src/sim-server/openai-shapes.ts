/**
 * vLLM's chat and completions bodies, byte for byte (streaming and non-streaming), for the
 * simulated backend and the vLLM-like upstream alike (answer-fields.ts says what differs).
 * Chat chunks are dumped with `exclude_unset` (only set keys), completion chunks with every
 * field, full responses with every field (nulls included). Strings are assembled around a
 * per-request prefix so each streamed token costs one `JSON.stringify` of its text, or none
 * when the caller has its text escaped already (`deltaJson`).
 *
 * Every chunk carries one choice, named by its `index`. A streamed tool call is vLLM's
 * structured-output stream: the first step's delta holds the call's id, type, index and
 * function name with the first piece of the arguments, each later step one more piece.
 */

import type { FinishReason } from "../engine/types.ts";
import { type AnswerFields, type ChoicesDialect, SIM_BACKEND_FIELDS } from "./answer-fields.ts";

/** A choice's finish reason: the engine's, or `tool_calls` for a call the model chose. */
export type ChoiceFinish = Exclude<FinishReason, "abort"> | "tool_calls";

export const SSE_DONE = "data: [DONE]\n\n";
export const SSE_CONTENT_TYPE = "text/event-stream; charset=utf-8";

export function sseEvent(json: string): string {
  return `data: ${json}\n\n`;
}

/** One SSE event as vLLM writes the Messages and Responses streams: its type, then its data. */
export function namedEvent(type: string, json: string): string {
  return `event: ${type}\ndata: ${json}\n\n`;
}

export interface ResponseMeta {
  endpoint: ChoicesDialect;
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
  /** `delta` of a text already written as a JSON string (quoted and escaped). */
  deltaJson(
    textJson: string,
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

export function createChunkWriter(
  meta: ResponseMeta,
  fields: AnswerFields = SIM_BACKEND_FIELDS,
): ChunkWriter {
  const chat = meta.endpoint === "chat";
  const object = chat ? "chat.completion.chunk" : "text_completion";
  const prefix = `{"id":${JSON.stringify(meta.id)},"object":"${object}","created":${meta.created},"model":${JSON.stringify(meta.model)},"choices":`;
  // vLLM's return_token_ids fields: null unless a request asks for them, but set, so
  // exclude_unset keeps them (answer-fields.ts: only a later vLLM has them).
  const tokenIds = chat && fields.tokenIds ? ',"token_ids":null' : "";
  const promptTokenIds = chat && fields.tokenIds ? ',"prompt_token_ids":null' : "";
  // A running usage (continuous_usage_stats) never reports cached tokens. Chat drops an
  // absent usage and the unset details (exclude_unset); completions print every field.
  // `after` is what follows the usage in chat's field order (the first chunk's prompt ids).
  const tail = (u: UsageCounts | null, after = "") => {
    if (u === null) return chat ? `${after}}` : `,"usage":null}`;
    return `,"usage":${usageBody({ ...u, cachedTokens: null }, !chat)}${after}}`;
  };
  const reason = (finish: ChoiceFinish | null) => (finish === null ? "null" : `"${finish}"`);
  const chatChoice = (delta: string, finish: ChoiceFinish | null, c: ChunkChoice) =>
    `{"index":${c.index},"delta":${delta},"logprobs":${c.logprobs ?? "null"},"finish_reason":${reason(finish)}${finish === null ? "" : ',"stop_reason":null'}${tokenIds}}`;
  // The commonest chunk, one token of choice 0 that neither ends nor carries a usage or
  // logprobs, is written around its text from two strings built once per answer.
  const tokenHead = `data: ${prefix}[${chat ? '{"index":0,"delta":{"content":' : '{"index":0,"text":'}`;
  const tokenTail = chat
    ? `},"logprobs":null,"finish_reason":null${tokenIds}}]}\n\n`
    : ',"logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":null}\n\n';
  const deltaJson = (
    json: string,
    finish: ChoiceFinish | null,
    u: UsageCounts | null,
    c: ChunkChoice = FIRST_CHOICE,
  ) => {
    if (finish === null && u === null && c.index === 0 && c.logprobs === null)
      return tokenHead + json + tokenTail;
    const choice = chat
      ? chatChoice(`{"content":${json}}`, finish, c)
      : `{"index":${c.index},"text":${json},"logprobs":${c.logprobs ?? "null"},"finish_reason":${reason(finish)},"stop_reason":null}`;
    return sseEvent(`${prefix}[${choice}]${tail(u)}`);
  };
  return {
    role: (u, index = 0) =>
      sseEvent(
        `${prefix}[{"index":${index},"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]${tail(u, promptTokenIds)}`,
      ),
    delta: (text, finish, u, c) => deltaJson(JSON.stringify(text), finish, u, c),
    deltaJson,
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

function choiceJson(chat: boolean, c: ChoiceResult, fields: AnswerFields): string {
  const lp = c.logprobs ?? "null";
  if (!chat) {
    return `{"index":${c.index},"text":${JSON.stringify(c.text ?? "")},"logprobs":${lp},"finish_reason":"${c.finish}","stop_reason":null,"prompt_logprobs":null}`;
  }
  const call = c.toolCall;
  const calls =
    call === null
      ? "[]"
      : `[{"id":${JSON.stringify(call.id)},"type":"function","function":{"name":${JSON.stringify(call.name)},"arguments":${JSON.stringify(call.arguments)}}}]`;
  const tokenIds = fields.tokenIds ? ',"token_ids":null' : "";
  return `{"index":${c.index},"message":{"role":"assistant","content":${JSON.stringify(c.text)},"refusal":null,"annotations":null,"audio":null,"function_call":null,"tool_calls":${calls},"${fields.reasoningField}":null},"logprobs":${lp},"finish_reason":"${c.finish}","stop_reason":null${tokenIds}}`;
}

/** The non-streaming body (full `model_dump()`), choices in index order. */
export function completionResponseBody(
  meta: ResponseMeta,
  choices: readonly ChoiceResult[],
  usage: UsageCounts,
  fields: AnswerFields = SIM_BACKEND_FIELDS,
): string {
  const chat = meta.endpoint === "chat";
  const head = `{"id":${JSON.stringify(meta.id)},"object":"${chat ? "chat.completion" : "text_completion"}","created":${meta.created},"model":${JSON.stringify(meta.model)},"choices":[`;
  const body = choices.map((c) => choiceJson(chat, c, fields)).join(",");
  const promptTokenIds = fields.tokenIds ? ',"prompt_token_ids":null' : "";
  const after = chat
    ? `,"prompt_logprobs":null${promptTokenIds},"kv_transfer_params":null}`
    : `,"kv_transfer_params":null}`;
  return `${head}${body}],"service_tier":null,"system_fingerprint":null,"usage":${usageBody(usage, true)}${after}`;
}

/** The non-streaming body of a single text choice without logprobs. */
export function completionResponseJson(
  meta: ResponseMeta,
  text: string,
  finish: ChoiceFinish,
  usage: UsageCounts,
  fields: AnswerFields = SIM_BACKEND_FIELDS,
): string {
  return completionResponseBody(
    meta,
    [{ index: 0, text, toolCall: null, logprobs: null, finish }],
    usage,
    fields,
  );
}
