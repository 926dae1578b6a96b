/**
 * Watches an OpenAI SSE stream on its way to the client (each event is `data: <compact JSON>`
 * ended by a blank line). Bytes are forwarded as they come, cut only at event boundaries by
 * the proxy's SSE framer (sse-framer.ts); only the event carrying `usage` is parsed as JSON.
 * Content events (non-empty `choices`, one per engine step) are counted as tokens for the
 * books. When maitred added `include_usage` itself, the usage-only event is removed so the
 * client sees what it asked for.
 *
 * Hot path (one call per upstream chunk): a single pass over each line's bytes finds the keys
 * it reads (`choices`, `usage`, and `finish_reason`, `tool_calls` and `function_call`, which
 * say whether the answer is a final one); profiles showed four native `indexOf` calls per
 * event costing more than the loop does. Keys inside a string cannot match: every quote there
 * is escaped.
 */
import type { Usage } from "../core/events.ts";
import {
  CLOSE_BRACKET,
  COLON,
  isSpace,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from "../util/json-bytes.ts";
import type { AnswerRelay, ContentHooks } from "./dialects/dialect.ts";
import { createSseFramer } from "./sse-framer.ts";
import { usageFrom } from "./usage.ts";

/** An event larger than this without a boundary is passed on unparsed (not SSE as we know it). */
const MAX_CARRY_BYTES = 1 << 20;

/** `choices"` and `usage"` after the opening quote. */
const CHOICES = Buffer.from('choices"');
const USAGE = Buffer.from('usage"');
/** `finish_reason"`, `tool_calls"` and `function_call"` after the opening quote. */
const FINISH_REASON = Buffer.from('finish_reason"');
const TOOL_CALLS = Buffer.from('tool_calls"');
const FUNCTION_CALL = Buffer.from('function_call"');
const STOP = Buffer.from('stop"');

/** Index of the value after `"key":` when `buf[i]` opens the key, else -1. */
function valueAfter(buf: Buffer, i: number, key: Buffer, end: number): number {
  const n = key.length;
  if (i + n + 2 > end) return -1;
  for (let k = 0; k < n; k++) if (buf[i + 1 + k] !== key[k]) return -1;
  let j = i + 1 + n;
  while (j < end && isSpace(buf[j])) j++;
  if (buf[j] !== COLON) return -1;
  j++;
  while (j < end && isSpace(buf[j])) j++;
  return j;
}

function parseEvent(buf: Buffer, start: number, stop: number): Usage | null {
  const text = buf.toString("utf8", start, stop).trim();
  if (!text.startsWith("data:")) return null;
  try {
    return usageFrom(JSON.parse(text.slice(5)));
  } catch {
    return null;
  }
}

export function createSseRelay(dropUsage: boolean, hooks: ContentHooks): AnswerRelay {
  let contentEvents = 0;
  let usage: Usage | null = null;
  /**
   * A choice finished with "stop"; one finished any other way (with several choices, every one
   * must stop); a tool or function call was seen.
   */
  let sawStop = false;
  let sawOther = false;
  let called = false;
  /** The event being read: it has content; where its usage object starts (-1: none). */
  let content = false;
  let usageAt = -1;
  /** Events dropped in this chunk: the pieces kept (allocated only when one is), from where. */
  let kept: Buffer[] | null = null;
  let keepFrom = 0;

  /** Reads a `finish_reason` value at `v`: a string is a choice's end, null is none yet. */
  function finishAt(buf: Buffer, v: number, end: number): void {
    if (buf[v] !== QUOTE) return;
    let k = 0;
    while (k < STOP.length && v + 1 + k < end && buf[v + 1 + k] === STOP[k]) k++;
    if (k === STOP.length) sawStop = true;
    else sawOther = true;
  }

  /** A `tool_calls` (a non-empty array) or `function_call` (an object) value at `v`. */
  function callAt(buf: Buffer, v: number, end: number, array: boolean): void {
    if (array) {
      if (buf[v] !== OPEN_BRACKET) return;
      let w = v + 1;
      while (w < end && isSpace(buf[w])) w++;
      if (buf[w] !== CLOSE_BRACKET) called = true;
    } else if (buf[v] === OPEN_BRACE) called = true;
  }

  const framer = createSseFramer(
    {
      /** The keys of one line, buf[from, end). */
      line(buf, from, end) {
        for (let i = from; i < end; i++) {
          if (buf[i] !== QUOTE) continue;
          const next = buf[i + 1];
          if (next === 0x63 /* c */) {
            const v = valueAfter(buf, i, CHOICES, end);
            if (v >= 0 && buf[v] === OPEN_BRACKET) {
              let w = v + 1;
              while (w < end && isSpace(buf[w])) w++;
              content = buf[w] !== CLOSE_BRACKET;
            }
          } else if (next === 0x75 /* u */ && usageAt < 0) {
            const v = valueAfter(buf, i, USAGE, end);
            if (v >= 0 && buf[v] === OPEN_BRACE) usageAt = v;
          } else if (next === 0x66 /* f */) {
            const v = valueAfter(buf, i, FINISH_REASON, end);
            if (v >= 0) finishAt(buf, v, end);
            else {
              const w = valueAfter(buf, i, FUNCTION_CALL, end);
              if (w >= 0) callAt(buf, w, end, false);
            }
          } else if (next === 0x74 /* t */ && !called) {
            const v = valueAfter(buf, i, TOOL_CALLS, end);
            if (v >= 0) callAt(buf, v, end, true);
          }
        }
      },
      // The usage of an event cut short by the stream's end is not read (nor is it dropped).
      end(buf, start, next, complete) {
        if (content) contentEvents++;
        if (complete && usageAt >= 0) {
          const parsed = parseEvent(buf, start, next);
          if (parsed) {
            usage = parsed;
            if (!content && dropUsage) {
              kept ??= [];
              if (start > keepFrom) kept.push(buf.subarray(keepFrom, start));
              keepFrom = next;
            }
          }
        }
        content = false;
        usageAt = -1;
      },
    },
    MAX_CARRY_BYTES,
  );

  /** The bytes to forward of `out` (the framer's), less the events dropped while it was read. */
  const forward = (out: Buffer | null, before: number): Buffer | null => {
    if (contentEvents !== before) hooks.onContent(contentEvents, before);
    if (out === null) return null;
    let send = out;
    if (kept !== null) {
      if (out.length > keepFrom) kept.push(out.subarray(keepFrom));
      send = Buffer.concat(kept);
    }
    kept = null;
    keepFrom = 0;
    return send.length > 0 ? send : null;
  };

  return {
    push(chunk) {
      const before = contentEvents;
      return forward(framer.push(chunk), before);
    },
    flush() {
      const before = contentEvents;
      return forward(framer.flush(), before);
    },
    get contentEvents() {
      return contentEvents;
    },
    get usage() {
      return usage;
    },
    /**
     * Every choice finished with `stop` and no event carried a tool call: the model's final
     * answer rather than a step of an agent loop.
     */
    get stopped() {
      return sawStop && !sawOther && !called;
    },
    responseId: null,
  };
}
