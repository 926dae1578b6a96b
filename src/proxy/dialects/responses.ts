/**
 * The OpenAI Responses API (`POST /v1/responses`, Codex, the Agents SDK): its instructions and
 * input items, its named events (responses-events.ts), errors in the OpenAI envelope and its
 * `error` event `{"type":"error","code","message","param"}`. A backend stores the responses it
 * makes, so a request continuing one (`previous_response_id`) is served by that backend alone,
 * and the routes that read or end one (`GET`/`DELETE /v1/responses/{id}`,
 * `POST /v1/responses/{id}/cancel`) go to it as they are (response-homes.ts).
 */
import { errorTypeForStatus, toErrorResponse } from "../../errors.ts";
import { asObj, type Json } from "../../util/json-object.ts";
import { backendErrorJson } from "../backend-error.ts";
import type { Dialect } from "./dialect.ts";
import { itemChars, systemChars } from "./message-chars.ts";
import { createNamedEventRebuilder } from "./named-event-rebuild.ts";
import { createNamedEventRelay } from "./named-event-relay.ts";
import { namedEventStreamPlan } from "./named-events.ts";
import { RESPONSES_EVENTS } from "./responses-events.ts";
import { namedEvent } from "./sse-events.ts";

/** The instructions first, then one entry per input item (or the input, a string). */
function inputChars(body: Json): number[] {
  const head = systemChars(body.instructions);
  const input = body.input;
  if (typeof input === "string") return [...head, input.length];
  return Array.isArray(input) ? [...head, ...input.map(itemChars)] : head;
}

/** An OpenAI envelope's error as the Responses API's `error` event. */
function responsesErrorEvent(error: Json): string {
  const { code, message, param } = error;
  return namedEvent(
    "error",
    JSON.stringify({ type: "error", code: code ?? null, message, param: param ?? null }),
  );
}

/**
 * A body the backend sent in place of a stream as the stream's `error` event, its fields moved
 * into the envelope first (backend-error.ts). The API has no event for a whole answer, so a
 * 2xx body there is no stream either: a 502.
 */
function bodyEvent(status: number, body: Buffer): string {
  const errorStatus = status >= 200 && status < 300 ? 502 : status;
  const inner = asObj(JSON.parse(backendErrorJson(errorStatus, body)).error) as Json;
  inner.type ??= errorTypeForStatus(errorStatus);
  return responsesErrorEvent(inner);
}

/** A response object whose id comes first, as vLLM and OpenAI write it. */
const RESPONSE_ID = /^\s*\{\s*"id"\s*:\s*"(resp_[^"\\]+)"/;

export const responses: Dialect = {
  name: "responses",
  path: "/v1/responses",
  passThrough: [
    { method: "GET", path: "/v1/responses/:id", stored: true },
    { method: "DELETE", path: "/v1/responses/:id", stored: true },
    { method: "POST", path: "/v1/responses/:id/cancel", stored: true },
  ],
  messageChars: inputChars,
  prepareStream: namedEventStreamPlan,
  previousResponseId: (body) =>
    typeof body.previous_response_id === "string" ? body.previous_response_id : null,
  relay: (_clientWantsUsage, hooks) => createNamedEventRelay(RESPONSES_EVENTS, hooks),
  rebuild: (_settings, hooks) => createNamedEventRebuilder(RESPONSES_EVENTS, hooks),
  storedResponseId: (body) => RESPONSE_ID.exec(body.toString("latin1", 0, 256))?.[1] ?? null,
  errorBody: (res) => res.body,
  errorEvent: (error) => responsesErrorEvent(toErrorResponse(error).body.error as unknown as Json),
  bodyEvent,
  keepAlive: "",
  takesPriority: true,
};
