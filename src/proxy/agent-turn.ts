/**
 * What the scheduler needs from one answer of the Anthropic Messages or the OpenAI Responses
 * API, read from its events as they pass (the relay, agent-sse-relay.ts, and the rebuilt plain
 * answer, rebuild-agent-answer.ts, feed it the same events): the usage, how the turn ended and,
 * for Responses, the response's id (where it is stored).
 *
 * Messages: `message_start` carries `usage.input_tokens` (and the cache fields), `message_delta`
 * the `stop_reason` and `usage.output_tokens` (vLLM and Anthropic also repeat the input counts
 * there). The prompt is `input_tokens` + `cache_read_input_tokens` + `cache_creation_input_tokens`
 * (Anthropic counts cache reads apart), the cached part `cache_read_input_tokens`. A turn is
 * the program's final answer when it ends `end_turn` or `stop_sequence` and called no tool; it
 * is a step of the agent loop when it ends `tool_use` (or `max_tokens`, `pause_turn`, …).
 *
 * Responses: `response.completed` (or `.incomplete`, `.failed`) carries the whole response:
 * its `usage` (`input_tokens`, `output_tokens`, `input_tokens_details.cached_tokens`), its
 * status and its output items. A final answer is a completed response with no `function_call`
 * (nor any other tool call) among its items; a response with one is a step.
 */
import type { Usage } from "../core/events.ts";
import { asObj, type Json } from "../util/json-object.ts";

export interface AgentTurn {
  /** One event, parsed (`name` is its `event:` line, else its data's `type`). */
  event(name: string, doc: Json): void;
  readonly usage: Usage | null;
  /** The turn was the program's final answer (see above). */
  readonly stopped: boolean;
  /** Responses: the response's id, once `response.created` (or its end) named it. */
  readonly responseId: string | null;
}

/** An event's data as a JSON object; undefined when it is none. */
export function eventDoc(data: string): Json | undefined {
  try {
    return asObj(JSON.parse(data));
  } catch {
    return undefined;
  }
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** Messages usage (`input_tokens`, cache fields, `output_tokens`) → the core's, or null. */
function messagesUsage(u: Json, start: Usage | null): Usage | null {
  const out = num(u.output_tokens);
  const own = num(u.input_tokens);
  const read = num(u.cache_read_input_tokens);
  const created = num(u.cache_creation_input_tokens) ?? 0;
  // A `message_delta` that repeats no input counts keeps those of `message_start`.
  const prompt = own === null ? (start?.promptTokens ?? null) : own + (read ?? 0) + created;
  if (prompt === null || out === null) return null;
  const usage: Usage = { promptTokens: prompt, completionTokens: out, totalTokens: prompt + out };
  const cached = own === null ? start?.cachedTokens : (read ?? undefined);
  if (cached !== undefined) usage.cachedTokens = cached;
  return usage;
}

/** Responses usage → the core's, or null. */
export function responsesUsage(u: Json | undefined): Usage | null {
  if (u === undefined) return null;
  const input = num(u.input_tokens);
  const output = num(u.output_tokens);
  if (input === null || output === null) return null;
  const usage: Usage = {
    promptTokens: input,
    completionTokens: output,
    totalTokens: num(u.total_tokens) ?? input + output,
  };
  const cached = num(asObj(u.input_tokens_details)?.cached_tokens);
  if (cached !== null) usage.cachedTokens = cached;
  return usage;
}

/** Output item types that are a tool call (the model's turn hands over to a tool). */
const CALL_ITEMS = new Set([
  "function_call",
  "custom_tool_call",
  "local_shell_call",
  "computer_call",
  "mcp_call",
]);

/** Whether a whole response is a final answer: completed, with no tool call among its items. */
export function responseIsFinal(response: Json): boolean {
  if (response.status !== "completed" || !Array.isArray(response.output)) return false;
  let message = false;
  for (const item of response.output) {
    const type = asObj(item)?.type;
    if (typeof type === "string" && CALL_ITEMS.has(type)) return false;
    if (type === "message") message = true;
  }
  return message;
}

/** Whether a whole Message is a final answer. */
export function messageIsFinal(message: Json): boolean {
  const reason = message.stop_reason;
  if (reason !== "end_turn" && reason !== "stop_sequence") return false;
  const content = message.content;
  return !Array.isArray(content) || !content.some((b) => asObj(b)?.type === "tool_use");
}

export function createAgentTurn(api: "messages" | "responses"): AgentTurn {
  let usage: Usage | null = null;
  let stopped = false;
  let responseId: string | null = null;
  // Messages: the prompt's counts from message_start, and whether a tool_use block opened.
  let start: Usage | null = null;
  let called = false;

  const messages = (name: string, doc: Json) => {
    if (name === "message_start") {
      const u = asObj(asObj(doc.message)?.usage);
      if (u !== undefined) start = messagesUsage({ output_tokens: 0, ...u }, null);
      usage = start;
    } else if (name === "content_block_start") {
      if (asObj(doc.content_block)?.type === "tool_use") called = true;
    } else if (name === "message_delta") {
      const u = asObj(doc.usage);
      if (u !== undefined) usage = messagesUsage(u, start) ?? usage;
      const reason = asObj(doc.delta)?.stop_reason;
      stopped = !called && (reason === "end_turn" || reason === "stop_sequence");
    }
  };
  const responses = (name: string, doc: Json) => {
    const response = asObj(doc.response);
    if (response === undefined) return;
    if (responseId === null && typeof response.id === "string") responseId = response.id;
    if (
      name === "response.completed" ||
      name === "response.incomplete" ||
      name === "response.failed"
    ) {
      usage = responsesUsage(asObj(response.usage)) ?? usage;
      stopped = responseIsFinal(response);
    }
  };
  return {
    event: api === "messages" ? messages : responses,
    get usage() {
      return usage;
    },
    get stopped() {
      return stopped;
    },
    get responseId() {
      return responseId;
    },
  };
}
