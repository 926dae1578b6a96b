/**
 * One agent step as a request of the API the bench speaks (`--api`): OpenAI chat completions
 * (the default), the Anthropic Messages API as Claude Code sends it, or the OpenAI Responses
 * API as Codex sends it. The same conversation and the same exact output length go out in
 * each, so runs over the three APIs compare like for like:
 * - chat: `messages`, `max_tokens` with `ignore_eos`, `program_id` in the body;
 * - messages: the system message as `system`, the rest as `messages`, `max_tokens`, the program
 *   as Claude Code names its session (header `x-claude-code-session-id`);
 * - responses: the system message as `instructions`, the rest as `input` items,
 *   `max_output_tokens`, `store: false`, the program as Codex names its session (header
 *   `session-id`, body `prompt_cache_key`).
 * `ignore_eos` (vLLM's sampling extension, which the simulated backend reads in every API) rides
 * along in all three.
 */
import type { ChatMessage } from "../engine/chat-template.ts";

export const BENCH_APIS = ["chat", "messages", "responses"] as const;
export type BenchApi = (typeof BENCH_APIS)[number];

export interface ApiStep {
  programId: string;
  model: string;
  messages: ChatMessage[];
  maxTokens: number;
  stream: boolean;
}

export interface ApiRequest {
  path: string;
  /** Headers this API's client adds (its session id). */
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

function split(messages: ChatMessage[]): { system: string | null; rest: ChatMessage[] } {
  const first = messages[0];
  if (first?.role !== "system" || typeof first.content !== "string")
    return { system: null, rest: messages };
  return { system: first.content, rest: messages.slice(1) };
}

export function apiRequest(api: BenchApi, s: ApiStep): ApiRequest {
  if (api === "messages") {
    const { system, rest } = split(s.messages);
    return {
      path: "/v1/messages",
      headers: { "x-claude-code-session-id": s.programId },
      body: {
        model: s.model,
        ...(system !== null && { system }),
        messages: rest,
        max_tokens: s.maxTokens,
        ignore_eos: true,
        temperature: 0,
        stream: s.stream,
      },
    };
  }
  if (api === "responses") {
    const { system, rest } = split(s.messages);
    return {
      path: "/v1/responses",
      headers: { "session-id": s.programId },
      body: {
        model: s.model,
        ...(system !== null && { instructions: system }),
        input: rest.map((m) => ({ type: "message", role: m.role, content: m.content })),
        max_output_tokens: s.maxTokens,
        ignore_eos: true,
        temperature: 0,
        store: false,
        prompt_cache_key: s.programId,
        stream: s.stream,
      },
    };
  }
  return {
    path: "/v1/chat/completions",
    headers: {},
    body: {
      model: s.model,
      messages: s.messages,
      max_tokens: s.maxTokens,
      ignore_eos: true,
      temperature: 0,
      ...(s.stream ? { stream: true, stream_options: { include_usage: true } } : { stream: false }),
      program_id: s.programId,
    },
  };
}
