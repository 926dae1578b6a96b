/**
 * The Anthropic Messages API (`POST /v1/messages`, Claude Code): its system prompt and messages,
 * its named events (messages-events.ts), its own error envelope
 * `{"type":"error","error":{"type","message"}}` and `error` event, which the Anthropic SDKs raise
 * as an APIError of that type, and its `ping` event as a held stream's keep-alive.
 * `POST /v1/messages/count_tokens` generates nothing and goes to a backend as it is.
 */
import { anthropicErrorType, toAnthropicErrorBody, toErrorResponse } from "../../errors.ts";
import { asObj, type Json } from "../../util/json-object.ts";
import { backendErrorJson } from "../backend-error.ts";
import type { Dialect } from "./dialect.ts";
import { listChars, systemChars } from "./message-chars.ts";
import { MESSAGES_EVENTS } from "./messages-events.ts";
import { createNamedEventRebuilder } from "./named-event-rebuild.ts";
import { createNamedEventRelay } from "./named-event-relay.ts";
import { eventDoc, namedEventStreamPlan } from "./named-events.ts";
import { namedEvent } from "./sse-events.ts";

/**
 * A body the backend sent in place of a stream as the stream's `error` event: an Anthropic
 * error body as the backend wrote it, any other moved into one. The API has no event for a
 * whole answer, so a 2xx body there is no stream either: a 502.
 */
function bodyEvent(status: number, body: Buffer): string {
  const doc = eventDoc(body.toString("utf8"));
  if (doc?.type === "error" && asObj(doc.error) !== undefined)
    return namedEvent("error", JSON.stringify(doc));
  const errorStatus = status >= 200 && status < 300 ? 502 : status;
  const inner = asObj(JSON.parse(backendErrorJson(errorStatus, body)).error) as Json;
  const message =
    typeof inner.message === "string" ? inner.message : `Backend answered ${errorStatus}.`;
  return namedEvent(
    "error",
    JSON.stringify({ type: "error", error: { type: anthropicErrorType(errorStatus), message } }),
  );
}

export const messages: Dialect = {
  name: "messages",
  path: "/v1/messages",
  passThrough: [{ method: "POST", path: "/v1/messages/count_tokens", stored: false }],
  messageChars: (body) => listChars(systemChars(body.system), body.messages),
  prepareStream: namedEventStreamPlan,
  previousResponseId: () => null,
  relay: (_clientWantsUsage, hooks) => createNamedEventRelay(MESSAGES_EVENTS, hooks),
  rebuild: (_settings, hooks) => createNamedEventRebuilder(MESSAGES_EVENTS, hooks),
  storedResponseId: () => null,
  errorBody: toAnthropicErrorBody,
  errorEvent: (error) =>
    namedEvent("error", JSON.stringify(toAnthropicErrorBody(toErrorResponse(error)))),
  bodyEvent,
  // Its SDKs skip a `ping` event, as they skip comments.
  keepAlive: 'event: ping\ndata: {"type": "ping"}\n\n',
  takesPriority: false,
};
