/**
 * The Anthropic Messages stream as the scheduler reads it and as a plain answer is rebuilt
 * from it.
 *
 * Reading (the turn): `message_start` carries `usage.input_tokens` (and the cache fields),
 * `message_delta` the `stop_reason` and `usage.output_tokens` (vLLM and Anthropic also repeat
 * the input counts there). The prompt is `input_tokens` + `cache_read_input_tokens` +
 * `cache_creation_input_tokens` (Anthropic counts cache reads apart), the cached part
 * `cache_read_input_tokens`. A turn is the program's final answer when it ends `end_turn` or
 * `stop_sequence` and called no tool; it is a step of the agent loop when it ends `tool_use`
 * (or `max_tokens`, `pause_turn`, …).
 *
 * Rebuilding (the answer): `message_start`'s message, its content blocks built from
 * `content_block_start` and the deltas (`text_delta`, `thinking_delta`, `signature_delta`,
 * `input_json_delta`, whose pieces are the tool input's JSON, parsed at `content_block_stop`),
 * `message_delta`'s `stop_reason`, `stop_sequence` and usage merged in: the Message object the
 * API answers. An `error` event is the answer with the status its error type names
 * (`overloaded_error` 529, as Anthropic answers; errors.ts holds the table).
 */
import type { Usage } from "../../core/events.ts";
import { anthropicErrorStatus } from "../../errors.ts";
import { asObj, type Json } from "../../util/json-object.ts";
import { type EventAnswer, type EventTurn, type NamedEvents, startsWith } from "./named-events.ts";

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

/** Whether a whole Message is a final answer. */
export function messageIsFinal(message: Json): boolean {
  const reason = message.stop_reason;
  if (reason !== "end_turn" && reason !== "stop_sequence") return false;
  const content = message.content;
  return !Array.isArray(content) || !content.some((b) => asObj(b)?.type === "tool_use");
}

function createMessagesTurn(): EventTurn {
  let usage: Usage | null = null;
  let stopped = false;
  // The prompt's counts from message_start, and whether a tool_use block opened.
  let start: Usage | null = null;
  let called = false;
  return {
    event(name, doc) {
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
    },
    glance: () => false,
    get usage() {
      return usage;
    },
    get stopped() {
      return stopped;
    },
    responseId: null,
  };
}

/**
 * A text or tool-input delta written compactly (`index`, then the delta's `type` and its one
 * string): its block, which string grows, and that string's JSON.
 */
const TEXT_DELTA =
  /^\{"type":"content_block_delta","index":(\d+),"delta":\{"type":"(?:text_delta|input_json_delta)","(text|partial_json)":("(?:[^"\\]|\\.)*")\}\}$/;

function createMessagesAnswer(): EventAnswer {
  let message: Json | null = null;
  const blocks: Json[] = [];
  const partial: string[] = [];
  const at = (doc: Json, last: number) => (typeof doc.index === "number" ? doc.index : last);
  return {
    delta(data) {
      // A token's delta as vLLM and Anthropic write it: only its string is decoded.
      const m = TEXT_DELTA.exec(data);
      if (m === null) return false;
      const block = blocks[Number(m[1])];
      try {
        const piece = JSON.parse(m[3]) as string;
        if (block === undefined) return true;
        if (m[2] === "text") block.text = `${block.text ?? ""}${piece}`;
        else partial[Number(m[1])] += piece;
        return true;
      } catch {
        return false; // not one JSON string after all: read whole
      }
    },
    event(name, doc) {
      if (name === "message_start") message = { ...(asObj(doc.message) ?? {}) };
      else if (name === "content_block_start") {
        const i = at(doc, blocks.length);
        blocks[i] = { ...(asObj(doc.content_block) ?? {}) };
        partial[i] = "";
      } else if (name === "content_block_delta") {
        const i = at(doc, blocks.length - 1);
        const block = blocks[i];
        const delta = asObj(doc.delta);
        if (block === undefined || delta === undefined) return;
        if (typeof delta.text === "string") block.text = `${block.text ?? ""}${delta.text}`;
        if (typeof delta.thinking === "string")
          block.thinking = `${block.thinking ?? ""}${delta.thinking}`;
        if (typeof delta.signature === "string") block.signature = delta.signature;
        if (typeof delta.partial_json === "string") partial[i] += delta.partial_json;
      } else if (name === "content_block_stop") {
        const i = at(doc, blocks.length - 1);
        const block = blocks[i];
        if (block !== undefined && block.type === "tool_use" && partial[i] !== "") {
          try {
            block.input = JSON.parse(partial[i]);
          } catch {
            // an input cut short stays as it started
          }
        }
      } else if (name === "message_delta" && message !== null) {
        Object.assign(message, asObj(doc.delta) ?? {});
        const usage = asObj(doc.usage);
        if (usage !== undefined) message.usage = { ...(asObj(message.usage) ?? {}), ...usage };
      }
    },
    error(doc) {
      const status = anthropicErrorStatus(asObj(doc.error)?.type) ?? 500;
      return { status, body: JSON.stringify(doc) };
    },
    finish() {
      if (message === null || message.stop_reason === undefined || message.stop_reason === null)
        return null;
      return { status: 200, body: JSON.stringify({ ...message, content: blocks.filter(Boolean) }) };
    },
  };
}

const CONTENT_BLOCK_DELTA = Buffer.from("content_block_delta");

export const MESSAGES_EVENTS: NamedEvents = {
  isTokenName: (buf, a, b) =>
    b - a === CONTENT_BLOCK_DELTA.length && startsWith(buf, a, b, CONTENT_BLOCK_DELTA),
  isToken: (name) => name === "content_block_delta",
  read: new Set(["message_start", "content_block_start", "message_delta"]),
  turn: createMessagesTurn,
  answer: createMessagesAnswer,
};
