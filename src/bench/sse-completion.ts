/**
 * A streamed chat completion as the bench reads it: `stream: true` with
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

export function createSseCompletionReader(onFirstToken: () => void): SseCompletionReader {
  let first = true;
  let error: Json | undefined;
  let routerNote: Map<string, string> | null = null;
  let text = "";
  let usage: Json | undefined;

  const onData = (data: string) => {
    if (data === "[DONE]") return;
    let event: Json | undefined;
    try {
      event = asObj(JSON.parse(data));
    } catch {
      return; // 4
    }
    if (event === undefined) return;
    if (event.error !== undefined) {
      error = event; // 3
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
    const u = asObj(event.usage);
    if (u !== undefined) usage = u; // 2
  };
  const parser = createParser({
    onEvent: (event) => onData(event.data.trim()),
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
      if (usage === undefined || typeof usage.prompt_tokens !== "number") return null;
      const cached = asObj(usage.prompt_tokens_details)?.cached_tokens;
      return {
        prompt: usage.prompt_tokens,
        cached: typeof cached === "number" ? cached : null,
        completion: typeof usage.completion_tokens === "number" ? usage.completion_tokens : 0,
        text,
      };
    },
  };
}

/**
 * The same figures from a plain (non-streamed) chat completion: `usage` and the first
 * choice's message content; null without usage (not a completion).
 */
export function completionFromJson(body: unknown): StreamedCompletion | null {
  const doc = asObj(body);
  const usage = asObj(doc?.usage);
  if (usage === undefined || typeof usage.prompt_tokens !== "number") return null;
  const choices = doc?.choices;
  const content = Array.isArray(choices) ? asObj(asObj(choices[0])?.message)?.content : undefined;
  const cached = asObj(usage.prompt_tokens_details)?.cached_tokens;
  return {
    prompt: usage.prompt_tokens,
    cached: typeof cached === "number" ? cached : null,
    completion: typeof usage.completion_tokens === "number" ? usage.completion_tokens : 0,
    text: typeof content === "string" ? content : "",
  };
}
