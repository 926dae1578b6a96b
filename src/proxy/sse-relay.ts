/**
 * Watches an OpenAI SSE stream on its way to the client (each event is `data: <compact JSON>`
 * ended by a blank line; lines end in `\n`, `\r\n` or `\r`, as the SSE format allows). Bytes
 * are forwarded as they come, cut only at event boundaries; only the event carrying `usage` is parsed as JSON. Content events (non-empty
 * `choices`, one per engine step) are counted as tokens for the books. When maitred added
 * `include_usage` itself, the usage-only event is removed so the client sees what it asked for.
 *
 * Hot path (one call per upstream chunk): a single pass over the bytes finds event boundaries
 * and the keys it reads (`choices`, `usage`, and `finish_reason`, `tool_calls` and
 * `function_call`, which say whether the answer is a final one); profiles showed four native
 * `indexOf` calls per event costing more than the loop does. Keys inside a string cannot match:
 * every quote there is escaped.
 */
import type { Usage } from "../core/events.ts";
import {
  CLOSE_BRACKET,
  COLON,
  CR,
  isSpace,
  LF,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from "../util/json-bytes.ts";
import { usageFrom } from "./usage.ts";

export interface SseRelayHooks {
  /** Content events passed: `count` = content events so far in this stream (called per chunk). */
  onContent(count: number, previous: number): void;
}

export interface SseRelay {
  /** Bytes to send now (null = nothing yet: an event is still incomplete). */
  push(chunk: Buffer): Buffer | null;
  /** Whatever is left when the upstream ends. */
  flush(): Buffer | null;
  readonly contentEvents: number;
  /**
   * The last usage seen. The last, not the first: with `continuous_usage_stats` every event
   * carries a running usage and only the final one is complete.
   */
  readonly usage: Usage | null;
  /**
   * Every choice finished with `stop` and no event carried a tool call: the model's final
   * answer rather than a step of an agent loop.
   */
  readonly stopped: boolean;
}

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

/** Length of the line ending at `i` (`\r\n` 2, `\n` or `\r` 1), 0 when there is none. */
function lineEnd(buf: Buffer, i: number, end: number): number {
  const c = buf[i];
  if (c === LF) return 1;
  if (c !== CR) return 0;
  return i + 1 < end && buf[i + 1] === LF ? 2 : 1;
}

/**
 * Whether `buf[0, end)` ends with a blank line (an event boundary): its last line ending
 * follows another line ending. A `\r` at the very end counts as a line ending: if a `\n`
 * follows in the next chunk it reads there as one more empty line, which ends no event.
 */
function endsWithBlankLine(buf: Buffer, end: number): boolean {
  let k = end;
  if (k < 2) return false;
  if (buf[k - 1] === LF) k -= buf[k - 2] === CR ? 2 : 1;
  else if (buf[k - 1] === CR) k -= 1;
  else return false;
  return k >= 1 && (buf[k - 1] === LF || buf[k - 1] === CR);
}

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

export function createSseRelay(dropUsage: boolean, hooks: SseRelayHooks): SseRelay {
  let carry: Buffer | null = null;
  let contentEvents = 0;
  let usage: Usage | null = null;
  /**
   * A choice finished with "stop"; one finished any other way (with several choices, every one
   * must stop); a tool or function call was seen.
   */
  let sawStop = false;
  let sawOther = false;
  let called = false;

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

  /** Scan the complete events in buf[0, end); returns the bytes to forward. */
  function scan(buf: Buffer, end: number): Buffer {
    const before = contentEvents;
    let kept: Buffer[] | null = null; // allocated only when an event is dropped
    let keepFrom = 0;
    let start = 0;
    let content = false;
    let usageAt = -1;
    for (let i = 0; i < end; i++) {
      const c = buf[i];
      if (c === QUOTE) {
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
      } else if (c === LF || c === CR) {
        const next = i + lineEnd(buf, i, end);
        const blank = next < end ? lineEnd(buf, next, end) : 0;
        if (blank === 0 && next < end) {
          i = next - 1; // the end of a field line: the event goes on
          continue;
        }
        const stop = next + blank;
        if (content) contentEvents++;
        if (usageAt >= 0) {
          const parsed = parseEvent(buf, start, stop);
          if (parsed) {
            usage = parsed;
            if (!content && dropUsage) {
              kept ??= [];
              if (start > keepFrom) kept.push(buf.subarray(keepFrom, start));
              keepFrom = stop;
            }
          }
        }
        start = stop;
        i = stop - 1;
        content = false;
        usageAt = -1;
      }
    }
    if (start < end && content) contentEvents++; // an unterminated last event (flush)
    if (contentEvents !== before) hooks.onContent(contentEvents, before);
    if (kept === null) return end === buf.length ? buf : buf.subarray(0, end);
    if (end > keepFrom) kept.push(buf.subarray(keepFrom, end));
    return Buffer.concat(kept);
  }

  return {
    push(chunk) {
      const buf: Buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
      carry = null;
      // Complete events end at the last blank line; the rest waits for the next chunk.
      let end = buf.length;
      while (end >= 2 && !endsWithBlankLine(buf, end)) {
        end--;
        if (buf.length - end > MAX_CARRY_BYTES) return buf;
      }
      if (end < 2) {
        if (buf.length > MAX_CARRY_BYTES) return buf;
        carry = Buffer.from(buf);
        return null;
      }
      if (end < buf.length) carry = Buffer.from(buf.subarray(end));
      const out = scan(buf, end);
      return out.length > 0 ? out : null;
    },
    flush() {
      if (!carry) return null;
      const buf = carry;
      carry = null;
      const out = scan(buf, buf.length);
      return out.length > 0 ? out : null;
    },
    get contentEvents() {
      return contentEvents;
    },
    get usage() {
      return usage;
    },
    get stopped() {
      return sawStop && !sawOther && !called;
    },
  };
}
