/**
 * Rebuilds the plain answer of a Messages or Responses request from the backend's stream, for
 * a client that asked for no stream (maitred streams every request it can: the stream is how
 * the scheduler sees the first token and the progress; prepare-request.ts).
 *
 * Messages: `message_start`'s message, its content blocks built from `content_block_start`
 * and the deltas (`text_delta`, `thinking_delta`, `signature_delta`, `input_json_delta`, whose
 * pieces are the tool input's JSON, parsed at `content_block_stop`), `message_delta`'s
 * `stop_reason`, `stop_sequence` and usage merged in: the Message object the API answers.
 * Responses: the response object of the stream's last event (`response.completed`,
 * `.incomplete` or `.failed`) is the plain answer as it stands.
 *
 * An `error` event becomes the answer with its status: Messages' error type names it
 * (`overloaded_error` 529, as Anthropic answers), a Responses error its `code` when that is a
 * status, else 500 in the OpenAI envelope. The events are parsed with eventsource-parser; the
 * same events go to agent-turn.ts for the usage and how the turn ended.
 */
import { createParser } from "eventsource-parser";
import type { Usage } from "../core/events.ts";
import { errorTypeForStatus } from "../errors.ts";
import { asObj, type Json } from "../util/json-object.ts";
import { createAgentTurn, eventDoc } from "./agent-turn.ts";
import type { CompletionRebuilder, RebuildHooks, RebuiltResponse } from "./rebuild-completion.ts";

/** Anthropic's statuses per error type (its API's, 529 for overloaded). */
const ANTHROPIC_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/**
 * A text or tool-input delta written compactly (`index`, then the delta's `type` and its one
 * string): its block, which string grows, and that string's JSON.
 */
const TEXT_DELTA =
  /^\{"type":"content_block_delta","index":(\d+),"delta":\{"type":"(?:text_delta|input_json_delta)","(text|partial_json)":("(?:[^"\\]|\\.)*")\}\}$/;

export interface AgentRebuilder extends CompletionRebuilder {
  readonly responseId: string | null;
}

function isDelta(api: "messages" | "responses", name: string): boolean {
  return api === "messages"
    ? name === "content_block_delta"
    : name.startsWith("response.") && name.endsWith(".delta");
}

export function createAgentRebuilder(
  api: "messages" | "responses",
  hooks: RebuildHooks,
): AgentRebuilder {
  const turn = createAgentTurn(api);
  const decoder = new TextDecoder();
  let contentEvents = 0;
  let message: Json | null = null;
  const blocks: Json[] = [];
  const partial: string[] = [];
  let response: Json | null = null;
  let error: RebuiltResponse | null = null;

  const messagesEvent = (name: string, doc: Json) => {
    if (name === "message_start") message = { ...(asObj(doc.message) ?? {}) };
    else if (name === "content_block_start") {
      const i = typeof doc.index === "number" ? doc.index : blocks.length;
      blocks[i] = { ...(asObj(doc.content_block) ?? {}) };
      partial[i] = "";
    } else if (name === "content_block_delta") {
      const i = typeof doc.index === "number" ? doc.index : blocks.length - 1;
      const block = blocks[i];
      const delta = asObj(doc.delta);
      if (block === undefined || delta === undefined) return;
      if (typeof delta.text === "string") block.text = `${block.text ?? ""}${delta.text}`;
      if (typeof delta.thinking === "string")
        block.thinking = `${block.thinking ?? ""}${delta.thinking}`;
      if (typeof delta.signature === "string") block.signature = delta.signature;
      if (typeof delta.partial_json === "string") partial[i] += delta.partial_json;
    } else if (name === "content_block_stop") {
      const i = typeof doc.index === "number" ? doc.index : blocks.length - 1;
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
  };

  const onEvent = (name: string, data: string) => {
    if (isDelta(api, name)) {
      contentEvents++;
      // A response's deltas are in its last event whole: nothing to read in them.
      if (api === "responses") return;
      // A token's delta as vLLM and Anthropic write it: only its string is decoded.
      const m = TEXT_DELTA.exec(data);
      if (m !== null) {
        const block = blocks[Number(m[1])];
        try {
          const piece = JSON.parse(m[3]) as string;
          if (block === undefined) return;
          if (m[2] === "text") block.text = `${block.text ?? ""}${piece}`;
          else partial[Number(m[1])] += piece;
          return;
        } catch {
          // not one JSON string after all: read whole below
        }
      }
    }
    const doc = eventDoc(data);
    if (doc === undefined) return;
    turn.event(name, doc);
    if (name === "error") {
      error = errorAnswer(api, doc);
      return;
    }
    if (api === "messages") messagesEvent(name, doc);
    else if (
      name === "response.completed" ||
      name === "response.incomplete" ||
      name === "response.failed"
    )
      response = asObj(doc.response) ?? null;
  };

  const parser = createParser({
    onEvent(e) {
      const doc = e.event === undefined ? undefined : e.event;
      let name = doc;
      if (name === undefined) {
        // No `event:` line: the data's own `type` names it.
        const m = /"type"\s*:\s*"([^"]+)"/.exec(e.data);
        name = m === null ? "" : m[1];
      }
      onEvent(name, e.data);
    },
  });

  return {
    push(chunk) {
      const before = contentEvents;
      parser.feed(decoder.decode(chunk, { stream: true }));
      if (contentEvents !== before) hooks.onContent(contentEvents, before);
    },
    finish() {
      parser.feed(`${decoder.decode()}\n\n`);
      if (error !== null) return error;
      if (api === "responses")
        return response === null ? null : { status: 200, body: JSON.stringify(response) };
      if (message === null || message.stop_reason === undefined || message.stop_reason === null)
        return null;
      return { status: 200, body: JSON.stringify({ ...message, content: blocks.filter(Boolean) }) };
    },
    get contentEvents() {
      return contentEvents;
    },
    get usage(): Usage | null {
      return turn.usage;
    },
    get stopped() {
      return turn.stopped;
    },
    get responseId() {
      return turn.responseId;
    },
  };
}

/** A stream's `error` event as the plain answer: its status, the dialect's envelope. */
function errorAnswer(api: "messages" | "responses", doc: Json): RebuiltResponse {
  if (api === "messages") {
    const type = asObj(doc.error)?.type;
    const status = (typeof type === "string" && ANTHROPIC_STATUS[type]) || 500;
    return { status, body: JSON.stringify(doc) };
  }
  const inner = asObj(doc.error) ?? doc;
  const code = inner.code;
  const n = typeof code === "number" ? code : Number(code);
  const status = Number.isInteger(n) && n >= 400 && n < 600 ? n : 500;
  const body = {
    error: {
      message: typeof inner.message === "string" ? inner.message : "The backend's stream failed.",
      type:
        typeof inner.type === "string" && inner.type !== "error"
          ? inner.type
          : errorTypeForStatus(status),
      param: inner.param ?? null,
      code: code ?? null,
    },
  };
  return { status, body: JSON.stringify(body) };
}
