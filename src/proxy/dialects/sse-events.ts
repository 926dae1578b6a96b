/**
 * The two ways a stream's events are written: OpenAI's unnamed `data:` events, which end with
 * `data: [DONE]`, and the named events of the Messages and Responses APIs (`event:` then
 * `data:`), which have no such end.
 */

/** `json` (an envelope, or a backend's body that stands in for its stream) and `[DONE]`. */
export function sseLastEvent(json: string): string {
  return `data: ${json}\n\ndata: [DONE]\n\n`;
}

/** One named event, as the agent APIs write theirs. */
export function namedEvent(type: string, json: string): string {
  return `event: ${type}\ndata: ${json}\n\n`;
}
