/**
 * What the vLLM-like upstream reads of a request: its API (by the path it was sent to), how
 * many tokens to answer with, whether to stream, whether to add the usage event, and a prompt
 * length good enough for the usage.
 *
 * Every request is answered with `max_completion_tokens` (else `max_tokens`, else
 * `max_output_tokens`, else 16) tokens and `finish_reason: "length"`: a benchmark needs the
 * length it asked for.
 */
import type { DialectName } from "../../sim-server/answer-fields.ts";

/** The API of a request: chat completions, Anthropic Messages or OpenAI Responses. */
export type Api = Extract<DialectName, "chat" | "messages" | "responses">;

export const API_PATHS: Record<Api, string> = {
  chat: "/v1/chat/completions",
  messages: "/v1/messages",
  responses: "/v1/responses",
};

export const DEFAULT_MODEL = "meta-llama/Llama-3.1-8B-Instruct";
const DEFAULT_MAX_TOKENS = 16;

export interface ChatRequest {
  api: Api;
  tokens: number;
  stream: boolean;
  includeUsage: boolean;
  promptTokens: number;
}

/** The API a POST to `path` (its query aside) is in; undefined for any other path. */
export function apiOfPath(path: string): Api | undefined {
  const bare = path.split("?")[0];
  return (Object.keys(API_PATHS) as Api[]).find((a) => API_PATHS[a] === bare);
}

/** Prompt tokens: roughly four bytes of request body per token, as for English text. */
const promptTokensOf = (bodyBytes: number) => Math.max(1, Math.round(bodyBytes / 4));

/** The request's body read; throws on a body that is not JSON. */
export function parseChatRequest(raw: Buffer, api: Api): ChatRequest {
  const body = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
  const max = body.max_completion_tokens ?? body.max_tokens ?? body.max_output_tokens;
  const tokens = typeof max === "number" && max >= 1 ? Math.floor(max) : DEFAULT_MAX_TOKENS;
  const so = body.stream_options as Record<string, unknown> | null | undefined;
  // vLLM: usage is sent when stream_options is given and its include_usage is not false
  // (the field defaults to true).
  const includeUsage =
    typeof so === "object" && so !== null && (so.include_usage ?? true) !== false;
  return {
    api,
    tokens,
    stream: body.stream === true,
    // The agent APIs' streams always carry their usage.
    includeUsage: api !== "chat" || includeUsage,
    promptTokens: promptTokensOf(raw.length),
  };
}
