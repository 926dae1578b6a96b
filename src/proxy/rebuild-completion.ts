/**
 * Rebuilds the ordinary JSON answer of a completion request from the backend's SSE stream, for
 * a client that asked for no stream. maitred streams from the backend for every request
 * because the stream is how the scheduler learns a request's progress: its first token, its
 * token count as it grows, and its usage at the end. A plain JSON answer says nothing until
 * the very end.
 *
 * What is joined and how the answer is laid out is in rebuild-choices.ts. An error event in
 * the stream (the envelope, or the flat shape SGLang writes: backend-error.ts) becomes the
 * response as the backend wrote it, with the status its `code` names.
 *
 * Content events (events with a non-empty `choices`, one per engine step) are counted as the
 * relay counts them (sse-relay.ts), so a rebuilt answer and a relayed stream feed the scheduler
 * the same progress. Events are cut by the proxy's SSE framer (sse-framer.ts).
 *
 * Hot path: a token's event is compared with the last one parsed whole around its text, and
 * only the text is decoded (token-pattern.ts).
 */
import type { Usage } from "../core/events.ts";
import { isSpace } from "../util/json-bytes.ts";
import { asObj, type Json } from "../util/json-object.ts";
import { backendErrorOf } from "./backend-error.ts";
import type { AnswerRebuilder, ContentHooks, RebuildSettings } from "./dialects/dialect.ts";
import { addChoice, buildAnswer, CHOICE_SHAPES, type Choice, keepLast } from "./rebuild-choices.ts";
import { createSseFramer } from "./sse-framer.ts";
import { patternText, type TokenPattern, tokenPattern } from "./token-pattern.ts";
import { usageFrom } from "./usage.ts";

/**
 * Largest single event: a chunk of one engine step is a few hundred bytes; one past this is
 * not a stream that can be rebuilt.
 */
const MAX_EVENT_BYTES = 16 * 1024 * 1024;

export type CompletionRebuilder = AnswerRebuilder;

export interface RebuildOptions extends RebuildSettings {
  /** Which of the two OpenAI dialects the stream speaks (its choices' shape). */
  endpoint: keyof typeof CHOICE_SHAPES;
}

/** A `data:` field at `from`. */
function dataField(buf: Buffer, from: number, end: number): boolean {
  return (
    end - from >= 5 &&
    buf[from] === 0x64 &&
    buf[from + 1] === 0x61 &&
    buf[from + 2] === 0x74 &&
    buf[from + 3] === 0x61 &&
    buf[from + 4] === 0x3a
  );
}

export function createCompletionRebuilder(
  options: RebuildOptions,
  hooks: ContentHooks,
): CompletionRebuilder {
  const shape = CHOICE_SHAPES[options.endpoint];
  const chat = shape.message;
  const top: Json = {};
  const choices: Choice[] = [];
  let usageRaw: Json | null = null;
  let usage: Usage | null = null;
  let error: { status: number; body: string } | null = null;
  let sawCompletion = false;
  let sawDone = false;
  let contentEvents = 0;

  /** The last event parsed whole, as the pattern of a token's event; null when it is none. */
  let pattern: TokenPattern | null = null;

  /** One event's data; `at` = where it lies in a buffer, for the pattern of the next ones. */
  const onData = (data: string, at?: { buf: Buffer; from: number; end: number }) => {
    if (data === "[DONE]") sawDone = true;
    if (error !== null || data === "[DONE]" || data === "") return;
    let event: Json | undefined;
    try {
      event = asObj(JSON.parse(data));
    } catch {
      return; // not JSON: nothing a completion is made of
    }
    if (event === undefined) return;
    const failed = backendErrorOf(event);
    if (failed !== undefined) {
      const code = failed.code;
      const status = Number.isInteger(code) && (code as number) >= 400 && (code as number) < 600;
      error = { status: status ? (code as number) : 500, body: data };
      return;
    }
    sawCompletion = true;
    for (const k in event) {
      if (k === "choices" || k === "usage" || k === "object") continue;
      if (k === "id" || k === "created" || k === "model") top[k] ??= event[k];
      else keepLast(top, k, event[k]);
    }
    const u = asObj(event.usage);
    if (u !== undefined) {
      usageRaw = u;
      usage = usageFrom(event) ?? usage;
    }
    if (Array.isArray(event.choices) && event.choices.length > 0) {
      contentEvents++;
      for (const c of event.choices) {
        const raw = asObj(c);
        if (raw !== undefined) addChoice(choices, raw);
      }
    }
    // The pattern is always the last event applied whole, or none: a token matching it changes
    // nothing but the text, since every other member it carries was just set the same way.
    pattern = at === undefined ? null : tokenPattern(chat, event, at.buf, at.from, at.end);
  };

  /**
   * The event being read: where its one `data:` line's value lies (the token's fast path reads
   * it in place), or its `data:` lines joined once there are more.
   */
  let lines = 0;
  let dataA = 0;
  let dataB = 0;
  let joined = "";
  const framer = createSseFramer(
    {
      line(buf, i, stop) {
        if (!dataField(buf, i, stop)) return;
        const a = buf[i + 5] === 0x20 ? i + 6 : i + 5;
        if (lines === 0) {
          dataA = a;
          dataB = stop;
        } else {
          if (lines === 1) joined = buf.toString("utf8", dataA, dataB);
          joined = `${joined}\n${buf.toString("utf8", a, stop)}`;
        }
        lines++;
      },
      end(buf) {
        const n = lines;
        lines = 0;
        if (n === 0) return;
        if (n > 1) {
          onData(joined.trim());
          joined = "";
          return;
        }
        let a = dataA;
        let b = dataB;
        while (a < b && isSpace(buf[a])) a++;
        while (b > a && isSpace(buf[b - 1])) b--;
        if (pattern !== null && error === null) {
          const text = patternText(pattern, buf, a, b);
          if (text !== undefined) {
            const choice = choices[pattern.index];
            choice.texts.set(pattern.key, (choice.texts.get(pattern.key) ?? "") + text);
            contentEvents++;
            return;
          }
        }
        onData(buf.toString("utf8", a, b).trim(), { buf, from: a, end: b });
      },
    },
    MAX_EVENT_BYTES,
  );

  return {
    push(chunk) {
      if (framer.overflowed) return;
      const before = contentEvents;
      framer.push(chunk);
      if (contentEvents !== before) hooks.onContent(contentEvents, before);
    },
    finish() {
      if (framer.overflowed) return null;
      // An unterminated last event still counts.
      const before = contentEvents;
      framer.flush();
      if (contentEvents !== before) hooks.onContent(contentEvents, before);
      if (error !== null) return error;
      if (!sawCompletion) return null;
      // A stream cut short (no [DONE], a choice without its finish reason) is no answer.
      if (!sawDone && choices.some((c) => c !== undefined && c.finishReason === null)) return null;
      return { status: 200, body: buildAnswer(shape, options, top, choices, usageRaw) };
    },
    get contentEvents() {
      return contentEvents;
    },
    get usage() {
      return usage;
    },
    responseId: null,
    get stopped() {
      let any = false;
      for (const c of choices) {
        if (c === undefined) continue;
        if (c.finishReason !== "stop" || c.toolCalls.length > 0 || c.functionCall !== null)
          return false;
        any = true;
      }
      return any;
    },
  };
}
