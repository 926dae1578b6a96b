/**
 * How maitred ends an SSE stream that failed, as vLLM ends one: the error as one event in the
 * OpenAI envelope, then `data: [DONE]`. The OpenAI SDKs raise an event with an `error` member
 * as an APIError; `[DONE]` tells any other reader the stream is over.
 */
import { errorBodyJson } from "../errors.ts";

/** `json` (an envelope, or a backend's body that stands in for its stream) and `[DONE]`. */
export function sseLastEvent(json: string): string {
  return `data: ${json}\n\ndata: [DONE]\n\n`;
}

/** maitred's own error as the event that ends a stream. */
export function sseErrorEvent(error: unknown): string {
  return sseLastEvent(errorBodyJson(error));
}
