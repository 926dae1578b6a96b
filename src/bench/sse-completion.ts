/**
 * A streamed answer as the bench reads it, of chat completions or of the agent APIs (the
 * Anthropic Messages and OpenAI Responses APIs, whose events are named by their `type`: a
 * `content_block_delta` or `response.*.delta` is output, `message_start`/`message_delta` or
 * `response.completed` carry the usage, `type: "error"` is an error). A chat completion: `stream: true` with
 * `stream_options.include_usage`, so the client sees its first token when it arrives (TTFT:
 * interactive latency is time to first token) and still gets usage, cached tokens
 * included, from the final chunk. Fed text as it arrives; events are `data: <json>`
 * (OpenAI/vLLM SSE), `data: [DONE]` ends the stream. Framing (any line ending the SSE format
 * allows, fields split over chunks, multi-line data) is eventsource-parser's.
 *
 * Cases per event:
 *   1. a chunk with a non-empty `choices` array is output: the first one is the first token
 *      (vLLM and the simulated backend send the role chunk with the first token);
 *   2. a chunk with `usage` carries the totals (the usage-only chunk has `choices: []`);
 *   3. an `{"error": …}` event is the backend failing mid-stream, or, on a stream maitred
 *      held, the hold or the backend failing before any output;
 *   4. anything else (keep-alives, unparsable lines) is ignored.
 *
 * Comments are skipped as every SSE client skips them, except maitred's own on a held stream
 * (`: maitred key=value …`): the router sent its 200 and head while the request was held, so
 * what the head could not say yet (where the request ran and how long it was held, or that the
 * hold ended in an error, with its status and Retry-After) comes in such a comment right before
 * the first event. The last one's fields are kept as `routerNote` for the caller to read as
 * the headers they stand for (step-client.ts). Comments are a few per held request, so this
 * costs the events nothing.
 */

import { createParser } from "eventsource-parser";
import { asObj, type Json } from "../util/json-object.ts";

export interface StreamedCompletion {
  prompt: number;
  cached: number | null;
  completion: number;
  text: string;
}

export interface SseCompletionReader {
  /** Feed the next piece of the body (any split, even mid-line or mid-character). */
  push(piece: string | Uint8Array): void;
  /** The error event's body, once one arrived (case 3). */
  readonly error: Json | undefined;
  /** The fields of the last `: maitred` comment, or null when there was none. */
  readonly routerNote: ReadonlyMap<string, string> | null;
  /** The completion once the stream ended; null without usage (not a completion). */
  result(): StreamedCompletion | null;
}

/** The agent APIs' named events the reader reads (besides the Responses token deltas). */
const READ_EVENTS = new Set([
  "message_start",
  "content_block_delta",
  "message_delta",
  "response.completed",
  "response.incomplete",
  "error",
]);

/** What starts maitred's comments, after the `:` and the space the SSE format drops. */
const NOTE_PREFIX = "maitred ";

/**
 * The `key=value` fields of a `: maitred …` comment (as eventsource-parser hands it over,
 * without its `: `); words without `=` (the keep-alive's `held`) are skipped. null for any
 * other comment.
 */
export function parseRouterNote(comment: string): Map<string, string> | null {
  if (!comment.startsWith(NOTE_PREFIX)) return null;
  const fields = new Map<string, string>();
  for (const word of comment.slice(NOTE_PREFIX.length).split(" ")) {
    const eq = word.indexOf("=");
    if (eq > 0) fields.set(word.slice(0, eq), word.slice(eq + 1));
  }
  return fields;
}

/** The token counts of a usage object of any of the three APIs; null when it holds none. */
export function usageCounts(u: Json | undefined, start?: Usage): Usage | undefined {
  if (u === undefined) return undefined;
  if (typeof u.prompt_tokens === "number") {
    const cached = asObj(u.prompt_tokens_details)?.cached_tokens;
    return {
      prompt: u.prompt_tokens,
      cached: typeof cached === "number" ? cached : null,
      completion: typeof u.completion_tokens === "number" ? u.completion_tokens : 0,
    };
  }
  const completion = typeof u.output_tokens === "number" ? u.output_tokens : 0;
  if (typeof u.input_tokens !== "number") return start && { ...start, completion };
  // Messages counts cache reads and writes apart from `input_tokens`; Responses within it.
  const read = u.cache_read_input_tokens;
  const write = u.cache_creation_input_tokens;
  const details = asObj(u.input_tokens_details)?.cached_tokens;
  const prompt =
    u.input_tokens +
    (typeof read === "number" ? read : 0) +
    (typeof write === "number" ? write : 0);
  const cached = typeof read === "number" ? read : typeof details === "number" ? details : null;
  return { prompt, cached, completion };
}

type Usage = Omit<StreamedCompletion, "text">;

export function createSseCompletionReader(onFirstToken: () => void): SseCompletionReader {
  let first = true;
  let error: Json | undefined;
  let routerNote: Map<string, string> | null = null;
  let text = "";
  let usage: Usage | undefined;

  const firstToken = () => {
    if (!first) return;
    first = false;
    onFirstToken(); // 1
  };

  /** The Messages and Responses APIs' events (named by `type`): tokens, text and usage. */
  const onAgentEvent = (type: string, event: Json) => {
    if (
      type === "content_block_delta" ||
      (type.startsWith("response.") && type.endsWith(".delta"))
    ) {
      firstToken();
      const delta = asObj(event.delta)?.text ?? event.delta;
      if (type !== "response.function_call_arguments.delta" && typeof delta === "string")
        text += delta;
    } else if (type === "message_start") {
      usage = usageCounts(asObj(asObj(event.message)?.usage)) ?? usage;
    } else if (type === "message_delta") {
      usage = usageCounts(asObj(event.usage), usage) ?? usage;
    } else if (type === "response.completed" || type === "response.incomplete") {
      usage = usageCounts(asObj(asObj(event.response)?.usage)) ?? usage;
    }
  };

  const onData = (data: string) => {
    if (data === "[DONE]") return;
    let event: Json | undefined;
    try {
      event = asObj(JSON.parse(data));
    } catch {
      return; // 4
    }
    if (event === undefined) return;
    if (event.error !== undefined || event.type === "error") {
      error = event; // 3
      return;
    }
    if (typeof event.type === "string") {
      onAgentEvent(event.type, event);
      return;
    }
    const choices = event.choices;
    if (Array.isArray(choices) && choices.length > 0) {
      if (first) {
        first = false;
        onFirstToken(); // 1
      }
      const content = asObj(asObj(choices[0])?.delta)?.content;
      if (typeof content === "string") text += content;
    }
    usage = usageCounts(asObj(event.usage)) ?? usage; // 2
  };
  const parser = createParser({
    onEvent: (event) => {
      // A named event of the agent APIs that carries none of the above is not parsed
      // (Responses' `response.created` echoes the whole request).
      if (
        event.event !== undefined &&
        !READ_EVENTS.has(event.event) &&
        !event.event.endsWith(".delta")
      )
        return;
      onData(event.data.trim());
    },
    onComment: (comment) => {
      routerNote = parseRouterNote(comment) ?? routerNote;
    },
  });
  // Bytes are decoded as a stream: a character split across two pieces is decoded whole.
  const decoder = new TextDecoder();

  return {
    push(piece) {
      parser.feed(typeof piece === "string" ? piece : decoder.decode(piece, { stream: true }));
    },
    get error() {
      return error;
    },
    get routerNote() {
      return routerNote;
    },
    result() {
      // A last event without its blank line still counts (a backend that closes right after
      // it): end its line and the event; after a complete stream this dispatches nothing.
      parser.feed(`${decoder.decode()}\n\n`);
      return usage === undefined ? null : { ...usage, text };
    },
  };
}

/**
 * The same figures from a plain (non-streamed) answer of any of the three APIs: its usage and
 * its text; null without usage (not an answer).
 */
export function completionFromJson(body: unknown): StreamedCompletion | null {
  const doc = asObj(body);
  const usage = usageCounts(asObj(doc?.usage));
  if (usage === undefined) return null;
  return { ...usage, text: textOf(doc as Json) };
}

/** A plain answer's text: a chat choice's message, a Message's text blocks, a response's output text. */
function textOf(doc: Json): string {
  const choices = doc.choices;
  if (Array.isArray(choices)) {
    const content = asObj(asObj(choices[0])?.message)?.content;
    return typeof content === "string" ? content : "";
  }
  const parts = Array.isArray(doc.content)
    ? doc.content
    : Array.isArray(doc.output)
      ? doc.output.flatMap((item) => {
          const c = asObj(item)?.content;
          return Array.isArray(c) ? c : [];
        })
      : [];
  return parts
    .map((p) => asObj(p)?.text)
    .filter((t) => typeof t === "string")
    .join("");
}
