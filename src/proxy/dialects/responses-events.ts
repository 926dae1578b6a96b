/**
 * The OpenAI Responses stream as the scheduler reads it and as a plain answer is rebuilt from
 * it. `response.completed` (or `.incomplete`, `.failed`) carries the whole response: its
 * `usage` (`input_tokens`, `output_tokens`, `input_tokens_details.cached_tokens`), its status
 * and its output items, and is the plain answer as it stands. A final answer is a completed
 * response with no `function_call` (nor any other tool call) among its items; a response with
 * one is a step. `response.created` names the response's id (where it is stored).
 *
 * An `error` event is the answer with the status its `code` names when that is one, else 500,
 * in the OpenAI envelope.
 */
import type { Usage } from "../../core/events.ts";
import { errorTypeForStatus } from "../../errors.ts";
import { asObj, type Json } from "../../util/json-object.ts";
import type { RebuiltResponse } from "./dialect.ts";
import { type EventAnswer, type EventTurn, type NamedEvents, startsWith } from "./named-events.ts";

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

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

/** The events that end a response, each carrying it whole. */
const ENDS = new Set(["response.completed", "response.incomplete", "response.failed"]);

/** The response's id at the head of `response.created`'s response object. */
const RESPONSE_ID = /"response":\s*\{\s*"id":\s*"([^"\\]+)"/;

function createResponsesTurn(): EventTurn {
  let usage: Usage | null = null;
  let stopped = false;
  let responseId: string | null = null;
  const turn: EventTurn = {
    event(name, doc) {
      const response = asObj(doc.response);
      if (response === undefined) return;
      if (responseId === null && typeof response.id === "string") responseId = response.id;
      if (ENDS.has(name)) {
        usage = responsesUsage(asObj(response.usage)) ?? usage;
        stopped = responseIsFinal(response);
      }
    },
    // `response.created` echoes the request (instructions, tools): its id is all we need.
    glance(name, data) {
      if (name !== "response.created") return false;
      const m = RESPONSE_ID.exec(data);
      if (m === null) return false;
      turn.event(name, { response: { id: m[1] } });
      return true;
    },
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
  return turn;
}

/** A stream's `error` event as the plain answer, in the OpenAI envelope. */
function errorAnswer(doc: Json): RebuiltResponse {
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

function createResponsesAnswer(): EventAnswer {
  let response: Json | null = null;
  return {
    // A response's deltas are in its last event whole: nothing to read in them.
    delta: null,
    event(name, doc) {
      if (ENDS.has(name)) response = asObj(doc.response) ?? null;
    },
    error: errorAnswer,
    finish: () => (response === null ? null : { status: 200, body: JSON.stringify(response) }),
  };
}

const RESPONSE_DOT = Buffer.from("response.");
const DOT_DELTA = Buffer.from(".delta");

export const RESPONSES_EVENTS: NamedEvents = {
  isTokenName: (buf, a, b) =>
    startsWith(buf, a, b, RESPONSE_DOT) && startsWith(buf, b - DOT_DELTA.length, b, DOT_DELTA),
  isToken: (name) => name.startsWith("response.") && name.endsWith(".delta"),
  read: new Set(["response.created", ...ENDS]),
  turn: createResponsesTurn,
  answer: createResponsesAnswer,
};
