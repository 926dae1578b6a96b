/**
 * How maitred ends an SSE stream that failed, in the stream's own API:
 * - chat completions and completions as vLLM ends one: the error as one event in the OpenAI
 *   envelope, then `data: [DONE]` (the OpenAI SDKs raise an event with an `error` member as an
 *   APIError; `[DONE]` tells any other reader the stream is over);
 * - the Anthropic Messages API with its `error` event,
 *   `{"type":"error","error":{"type","message"}}`, which the Anthropic SDKs raise as an
 *   APIError of that type;
 * - the OpenAI Responses API with its `error` event, `{"type":"error","code","message","param"}`.
 * Neither agent API ends its stream with `[DONE]`.
 */
import {
  anthropicErrorType,
  errorBodyJson,
  errorTypeForStatus,
  toAnthropicErrorBody,
  toErrorResponse,
} from "../errors.ts";
import { asObj, type Json } from "../util/json-object.ts";
import { backendErrorJson } from "./backend-error.ts";
import type { Endpoint } from "./prepare-request.ts";

/** `json` (an envelope, or a backend's body that stands in for its stream) and `[DONE]`. */
export function sseLastEvent(json: string): string {
  return `data: ${json}\n\ndata: [DONE]\n\n`;
}

/** One named event, as the agent APIs write theirs. */
function namedEvent(type: string, json: string): string {
  return `event: ${type}\ndata: ${json}\n\n`;
}

/** An OpenAI envelope's error as the Responses API's `error` event. */
function responsesErrorEvent(error: Json): string {
  const { code, message, param } = error;
  return namedEvent(
    "error",
    JSON.stringify({ type: "error", code: code ?? null, message, param: param ?? null }),
  );
}

/** maitred's own error as the event that ends a stream of `endpoint`. */
export function sseErrorEvent(error: unknown, endpoint: Endpoint = "chat"): string {
  if (endpoint === "messages")
    return namedEvent("error", JSON.stringify(toAnthropicErrorBody(toErrorResponse(error))));
  if (endpoint === "responses")
    return responsesErrorEvent(toErrorResponse(error).body.error as unknown as Json);
  return sseLastEvent(errorBodyJson(error));
}

/**
 * A backend's error body (status `status`) as the event that ends a stream of `endpoint`:
 * in the OpenAI envelope for chat (backend-error.ts); for Messages an Anthropic error body as
 * the backend wrote it, any other moved into one; for Responses the error's fields.
 */
export function backendErrorEvent(status: number, body: Buffer, endpoint: Endpoint): string {
  if (endpoint === "chat" || endpoint === "completions")
    return sseLastEvent(backendErrorJson(status, body));
  let doc: Json | undefined;
  try {
    doc = asObj(JSON.parse(body.toString("utf8")));
  } catch {
    // not JSON: moved into the envelope below
  }
  if (endpoint === "messages") {
    if (doc?.type === "error" && asObj(doc.error) !== undefined)
      return namedEvent("error", JSON.stringify(doc));
    const inner = asObj(JSON.parse(backendErrorJson(status, body)).error) as Json;
    const message =
      typeof inner.message === "string" ? inner.message : `Backend answered ${status}.`;
    return namedEvent(
      "error",
      JSON.stringify({ type: "error", error: { type: anthropicErrorType(status), message } }),
    );
  }
  const inner = asObj(JSON.parse(backendErrorJson(status, body)).error) as Json;
  inner.type ??= errorTypeForStatus(status);
  return responsesErrorEvent(inner);
}
