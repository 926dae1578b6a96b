/**
 * What chat completions and completions share: OpenAI's unnamed `data:` events, usage only when
 * `stream_options.include_usage` asks for it, errors in the OpenAI envelope, a stream that ends
 * with `data: [DONE]`, and no stored responses. chat.ts and completions.ts differ only in their
 * route, how their request names its messages and what a choice holds.
 *
 * Upstream is a stream for every request it can be (`--upstream-stream always`, the default):
 * the stream is how the scheduler sees a request's first token and progress, and the proxy
 * rebuilds the plain JSON answer for a client that asked for none. A request the backend would
 * treat differently when streamed goes as the client sent it: `stream_options` without
 * `stream` (the backend's own 400 stays the answer), `prompt_logprobs` (vLLM refuses it in a
 * stream), beam search and `best_of` > 1 (whole-sequence search has no stream).
 */
import { Errors, errorBodyJson } from "../../errors.ts";
import type { Json } from "../../util/json-object.ts";
import { backendErrorJson } from "../backend-error.ts";
import { createCompletionRebuilder } from "../rebuild-completion.ts";
import { createSseRelay } from "../sse-relay.ts";
import type { Dialect, StreamPlan, UpstreamStream } from "./dialect.ts";
import { sseLastEvent } from "./sse-events.ts";

/** Whether the backend answers this request the same when it is streamed (see the header). */
function streamsTheSame(body: Json): boolean {
  const absent = (v: unknown) => v === undefined || v === null;
  return (
    absent(body.stream_options) &&
    absent(body.prompt_logprobs) &&
    body.use_beam_search !== true &&
    (absent(body.best_of) || body.best_of === 1)
  );
}

/**
 * vLLM's `message.content` beside tool calls in a plain answer: "" when the call was forced
 * (`required` or a named function), null when the model chose it (`auto`).
 */
function toolCallContentOf(toolChoice: unknown): "" | null {
  return toolChoice === "required" || (typeof toolChoice === "object" && toolChoice !== null)
    ? ""
    : null;
}

/** The plans that change nothing, made once: a request's plan is read, never changed. */
const AS_SENT: StreamPlan = { put: [], rebuild: null, clientWantsUsage: false };
const USAGE_ASKED: StreamPlan = { put: [], rebuild: null, clientWantsUsage: true };

function prepareStream(body: Json, stream: boolean, upstreamStream: UpstreamStream): StreamPlan {
  if (!stream && upstreamStream === "always" && streamsTheSame(body)) {
    return {
      put: [
        ["stream", true],
        ["stream_options", { include_usage: true }],
      ],
      rebuild: { toolCallContent: toolCallContentOf(body.tool_choice) },
      clientWantsUsage: false,
    };
  }
  if (!stream) return AS_SENT;
  const so = body.stream_options;
  if (so !== undefined && so !== null && (typeof so !== "object" || Array.isArray(so))) {
    throw Errors.badRequest("stream_options must be an object", "stream_options");
  }
  const clientWantsUsage = (so as Json | undefined)?.include_usage === true;
  // Usage is how the books learn real token counts (ThunderAgent adds it too).
  if (clientWantsUsage) return USAGE_ASKED;
  return {
    put: [["stream_options", { ...((so as Json | null) ?? {}), include_usage: true }]],
    rebuild: null,
    clientWantsUsage,
  };
}

/**
 * The body a backend sent instead of a stream, as the stream's last event: an answer (2xx JSON)
 * as it came, compacted to one line; an error in the OpenAI envelope (backend-error.ts), since
 * a client finds an error in a stream only in an event with an `error` member.
 */
function bodyEvent(status: number, body: Buffer): string {
  if (status >= 200 && status < 300) {
    try {
      const doc: unknown = JSON.parse(body.toString("utf8"));
      if (typeof doc === "object" && doc !== null) return sseLastEvent(JSON.stringify(doc));
    } catch {
      // not JSON: no answer, so an error below
    }
  }
  return sseLastEvent(backendErrorJson(status, body));
}

/** One of the two OpenAI completion dialects (`name` is also what its rebuilt choices hold). */
export function openAiDialect(
  name: "chat" | "completions",
  path: string,
  messageChars: (body: Json) => number[],
): Dialect {
  return {
    name,
    path,
    passThrough: [],
    messageChars,
    prepareStream,
    previousResponseId: () => null,
    relay: (clientWantsUsage, hooks) => createSseRelay(!clientWantsUsage, hooks),
    rebuild: (settings, hooks) => createCompletionRebuilder({ endpoint: name, ...settings }, hooks),
    storedResponseId: () => null,
    errorBody: (res) => res.body,
    // As vLLM ends a stream that failed: the envelope as one event, then `[DONE]` (the OpenAI
    // SDKs raise an event with an `error` member as an APIError; `[DONE]` tells any other
    // reader the stream is over).
    errorEvent: (error) => sseLastEvent(errorBodyJson(error)),
    bodyEvent,
    keepAlive: "",
    takesPriority: true,
  };
}
