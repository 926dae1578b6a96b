/**
 * vLLM's response bodies, byte for byte (streaming and non-streaming).
 * Chat chunks are dumped with `exclude_unset` (only set keys), completion chunks with every
 * field, full responses with every field (nulls included). Strings are assembled around a
 * per-request prefix so each streamed token costs one `JSON.stringify` of its text
 *.
 */

import type { FinishReason } from "../engine/types.ts";

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

export interface ChunkWriter {
  /** Chat only: the `{"role":"assistant","content":""}` chunk sent with the first token. */
  role(usage: UsageCounts | null): string;
  /** One token's text, with the finish reason on the last one. */
  delta(text: string, finish: FinishReason | null, usage: UsageCounts | null): string;
  /** The `include_usage` chunk with `"choices": []`. */
  usage(usage: UsageCounts): string;
}

export function createChunkWriter(meta: ResponseMeta): ChunkWriter {
  const chat = meta.endpoint === "chat";
  const object = chat ? "chat.completion.chunk" : "text_completion";
  const prefix = `{"id":${JSON.stringify(meta.id)},"object":"${object}","created":${meta.created},"model":${JSON.stringify(meta.model)},"choices":`;
  // Stream chunks drop an absent usage: chat by exclude_unset, completions print `null`.
  const tail = (u: UsageCounts | null) =>
    u !== null ? `,"usage":${usageBody(u, false)}}` : chat ? "}" : `,"usage":null}`;
  return {
    role: (u) =>
      sseEvent(
        `${prefix}[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]${tail(u)}`,
      ),
    delta(text, finish, u) {
      const reason = finish === null ? "null" : `"${finish}"`;
      const choice = chat
        ? `{"index":0,"delta":{"content":${JSON.stringify(text)}},"logprobs":null,"finish_reason":${reason}${finish === null ? "" : ',"stop_reason":null'}}`
        : `{"index":0,"text":${JSON.stringify(text)},"logprobs":null,"finish_reason":${reason},"stop_reason":null}`;
      return sseEvent(`${prefix}[${choice}]${tail(u)}`);
    },
    usage: (u) => sseEvent(`${prefix}[],"usage":${usageBody(u, false)}}`),
  };
}

/** The non-streaming body (full `model_dump()`, v0.11-era fields). */
export function completionResponseJson(
  meta: ResponseMeta,
  text: string,
  finish: FinishReason,
  usage: UsageCounts,
): string {
  const head = `{"id":${JSON.stringify(meta.id)},"object":"${meta.endpoint === "chat" ? "chat.completion" : "text_completion"}","created":${meta.created},"model":${JSON.stringify(meta.model)},"choices":[`;
  const content = JSON.stringify(text);
  const choice =
    meta.endpoint === "chat"
      ? `{"index":0,"message":{"role":"assistant","content":${content},"refusal":null,"annotations":null,"audio":null,"function_call":null,"tool_calls":[],"reasoning_content":null},"logprobs":null,"finish_reason":"${finish}","stop_reason":null}`
      : `{"index":0,"text":${content},"logprobs":null,"finish_reason":"${finish}","stop_reason":null,"prompt_logprobs":null}`;
  const after =
    meta.endpoint === "chat"
      ? `,"prompt_logprobs":null,"kv_transfer_params":null}`
      : `,"kv_transfer_params":null}`;
  return `${head}${choice}],"service_tier":null,"system_fingerprint":null,"usage":${usageBody(usage, true)}${after}`;
}
