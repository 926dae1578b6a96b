/**
 * Watches an Anthropic Messages or OpenAI Responses stream on its way to the client. Both are
 * named events (`event: <type>` then `data: <json>`, a blank line after), relayed byte for
 * byte and cut only at event boundaries (nothing is added or removed: their usage is always in
 * the stream). One pass over the bytes finds each event's name; the token events (Messages
 * `content_block_delta`, Responses `response.*.delta`, one per engine step) are counted for
 * the books without being parsed, and the few others (the message's or response's start and
 * end, a block or item that opens) are parsed and read by agent-turn.ts for the usage, how
 * the turn ended and the response's id. An event without an `event:` line is parsed and named
 * by its data's `type`.
 *
 * Framing: the SSE format lets a line end in `\n`, `\r\n` or `\r`. When a chunk holds no `\r`
 * (what vLLM, SGLang and the official APIs write) lines are cut with native searches for `\n`;
 * otherwise byte by byte.
 */
import { CR, LF } from "../util/json-bytes.ts";
import { type AgentTurn, createAgentTurn, eventDoc } from "./agent-turn.ts";
import type { SseRelay, SseRelayHooks } from "./sse-relay.ts";

export interface AgentSseRelay extends SseRelay {
  readonly responseId: string | null;
}

/** An event larger than this without a boundary is passed on unparsed (not SSE as we know it). */
const MAX_CARRY_BYTES = 1 << 20;

/** The events agent-turn.ts reads; the others pass unread. */
const MESSAGES_READ = new Set(["message_start", "content_block_start", "message_delta"]);
const RESPONSES_READ = new Set([
  "response.created",
  "response.completed",
  "response.incomplete",
  "response.failed",
]);
/** The response's id at the head of `response.created`'s response object. */
const RESPONSE_ID = /"response":\s*\{\s*"id":\s*"([^"\\]+)"/;

const EVENT = Buffer.from("event:");
const DATA = Buffer.from("data:");
const CONTENT_BLOCK_DELTA = Buffer.from("content_block_delta");
const RESPONSE_DOT = Buffer.from("response.");
const DOT_DELTA = Buffer.from(".delta");

function startsWith(buf: Buffer, at: number, end: number, prefix: Buffer): boolean {
  if (end - at < prefix.length) return false;
  for (let k = 0; k < prefix.length; k++) if (buf[at + k] !== prefix[k]) return false;
  return true;
}

/** End of the line that starts at `i` (index of its `\r` or `\n`, or `end`). */
function lineStop(buf: Buffer, i: number, end: number, cr: boolean): number {
  if (!cr) {
    const j = buf.indexOf(LF, i);
    return j < 0 || j > end ? end : j;
  }
  while (i < end && buf[i] !== LF && buf[i] !== CR) i++;
  return i;
}

/** Index after the line ending at `i` (`\r\n` counts as one). */
function afterEnding(buf: Buffer, i: number, end: number): number {
  if (i >= end) return end;
  return buf[i] === CR && i + 1 < end && buf[i + 1] === LF ? i + 2 : i + 1;
}

export function createAgentSseRelay(
  api: "messages" | "responses",
  hooks: SseRelayHooks,
): AgentSseRelay {
  const turn: AgentTurn = createAgentTurn(api);
  let carry: Buffer | null = null;
  let contentEvents = 0;

  /** Whether the name at buf[a, b) is a token event. */
  const isToken = (buf: Buffer, a: number, b: number): boolean =>
    api === "messages"
      ? b - a === CONTENT_BLOCK_DELTA.length && startsWith(buf, a, b, CONTENT_BLOCK_DELTA)
      : startsWith(buf, a, b, RESPONSE_DOT) && startsWith(buf, b - DOT_DELTA.length, b, DOT_DELTA);

  const wanted = api === "messages" ? MESSAGES_READ : RESPONSES_READ;

  /** A non-token event the turn reads (or one not named): parse its data and tell the turn. */
  const read = (name: string | null, data: string) => {
    // `response.created` echoes the request (instructions, tools): its id is all we need.
    if (name === "response.created") {
      const m = RESPONSE_ID.exec(data);
      if (m !== null) {
        turn.event(name, { response: { id: m[1] } });
        return;
      }
    }
    const doc = eventDoc(data);
    if (doc === undefined) return;
    const type = name ?? (typeof doc.type === "string" ? doc.type : null);
    if (type !== null) turn.event(type, doc);
  };

  /**
   * Reads the complete events in buf[0, end) (which ends with a blank line); returns the
   * index after the last complete event.
   */
  function scan(buf: Buffer, end: number): void {
    const before = contentEvents;
    const cr = buf.indexOf(CR) >= 0;
    let i = 0;
    let nameA = -1;
    let nameB = -1;
    let data: string | null = null;
    let token = false;
    /** A named event the turn does not read: its data is not even decoded. */
    let skip = false;
    while (i < end) {
      const stop = lineStop(buf, i, end, cr);
      if (stop === i) {
        // A blank line ends the event.
        if (token) contentEvents++;
        else if (data !== null) read(nameA < 0 ? null : buf.toString("latin1", nameA, nameB), data);
        nameA = -1;
        data = null;
        token = false;
        skip = false;
      } else if (startsWith(buf, i, stop, EVENT)) {
        let a = i + EVENT.length;
        if (buf[a] === 0x20) a++;
        nameA = a;
        nameB = stop;
        token = isToken(buf, a, stop);
        skip = !token && !wanted.has(buf.toString("latin1", a, stop));
      } else if (!token && !skip && startsWith(buf, i, stop, DATA)) {
        let a = i + DATA.length;
        if (buf[a] === 0x20) a++;
        const text = buf.toString("utf8", a, stop);
        data = data === null ? text : `${data}\n${text}`;
      }
      i = afterEnding(buf, stop, end);
    }
    if (token)
      contentEvents++; // an unterminated last event (flush)
    else if (data !== null) read(nameA < 0 ? null : buf.toString("latin1", nameA, nameB), data);
    if (contentEvents !== before) hooks.onContent(contentEvents, before);
  }

  /** Index after the last blank line in buf (0 when none). */
  function lastBoundary(buf: Buffer): number {
    for (let k = buf.length - 1; k > 0; k--) {
      const c = buf[k];
      if (c !== LF && c !== CR) continue;
      // `c` ends a line; a line ending right before it makes a blank line.
      let p = k - 1;
      if (c === LF && buf[p] === CR) p--;
      if (p >= 0 && (buf[p] === LF || buf[p] === CR)) return k + 1;
    }
    return 0;
  }

  return {
    push(chunk) {
      const buf: Buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
      carry = null;
      const end = lastBoundary(buf);
      if (end === 0) {
        if (buf.length > MAX_CARRY_BYTES) return buf;
        carry = Buffer.from(buf);
        return null;
      }
      if (end < buf.length) carry = Buffer.from(buf.subarray(end));
      scan(buf, end);
      return end === buf.length ? buf : buf.subarray(0, end);
    },
    flush() {
      if (!carry) return null;
      const buf = carry;
      carry = null;
      scan(buf, buf.length);
      return buf.length > 0 ? buf : null;
    },
    get contentEvents() {
      return contentEvents;
    },
    get usage() {
      return turn.usage;
    },
    get stopped() {
      return turn.stopped;
    },
    get responseId() {
      return turn.responseId;
    },
  };
}
