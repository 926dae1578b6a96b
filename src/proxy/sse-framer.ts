/**
 * The proxy's one SSE framer: cuts a backend's stream into events as the SSE format defines
 * them (lines ending in `\n`, `\r\n` or `\r`; a blank line ends an event) for every reader of a
 * stream, the relays and the rebuilds of every dialect. Each reader is a sink that is told each
 * line of an event and each event's end; what a line means (a `data:` field, an event's name,
 * the keys a relay looks for) is the reader's business.
 *
 * An event may arrive in pieces: the chunks of one not yet ended are kept as they came (no
 * copy) and joined once a chunk ends it. When a chunk holds no `\r` (what vLLM, SGLang and the
 * official APIs write) lines are cut with native searches for `\n`; otherwise byte by byte.
 *
 * Hot path (one call per upstream chunk): a chunk of whole events, nothing carried before it,
 * is read where it lies and returned as the same buffer; nothing is allocated for it.
 */
import { CR, LF } from "../util/json-bytes.ts";

export interface SseSink {
  /** One line of an event (never a blank one): buf[start, stop), its line ending left out. */
  line(buf: Buffer, start: number, stop: number): void;
  /**
   * The event whose bytes are buf[start, next) ended, at a blank line (`complete`) or with the
   * stream (its last event, unterminated). Called only for an event of at least one line.
   */
  end(buf: Buffer, start: number, next: number, complete: boolean): void;
}

export interface SseFramer {
  /**
   * `chunk`, after what earlier chunks left unended: its ended events go to the sink, and the
   * bytes that hold them are returned (the chunk itself when it ends at a boundary and nothing
   * was carried); the rest waits for the next chunk. Null while no event has ended. Bytes that
   * run past the framer's bound without a boundary are no SSE it knows: they are returned
   * unread (`overflowed`) and framing starts afresh.
   */
  push(chunk: Buffer): Buffer | null;
  /** The stream ended: what is left (its last event, unterminated) goes to the sink. */
  flush(): Buffer | null;
  /** Some bytes ran past the bound without a boundary and were returned unread. */
  readonly overflowed: boolean;
}

const isLineEnd = (c: number | undefined) => c === LF || c === CR;

/** Index after the last blank line in buf (0 when none). */
function lastBoundary(buf: Buffer): number {
  for (let k = buf.length - 1; k > 0; k--) {
    const c = buf[k];
    if (c !== LF && c !== CR) continue;
    // `c` ends a line; a line ending right before it makes a blank line.
    let p = k - 1;
    if (c === LF && buf[p] === CR) p--;
    if (p >= 0 && isLineEnd(buf[p])) return k + 1;
  }
  return 0;
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

/** Tells `sink` the lines and events of buf[0, end); `ended`: `end` is an event boundary. */
function cut(buf: Buffer, end: number, sink: SseSink, ended: boolean): void {
  const cr = buf.indexOf(CR) >= 0;
  let i = 0;
  let start = 0;
  let lines = 0;
  while (i < end) {
    const stop = lineStop(buf, i, end, cr);
    if (stop === i) {
      // A blank line ends the event.
      const next = afterEnding(buf, i, end);
      if (lines > 0) sink.end(buf, start, next, true);
      lines = 0;
      start = next;
      i = next;
      continue;
    }
    sink.line(buf, i, stop);
    lines++;
    i = afterEnding(buf, stop, end);
  }
  if (lines > 0) sink.end(buf, start, end, ended);
}

/** A framer feeding `sink`; `maxCarry`: the most bytes kept waiting for an event's end. */
export function createSseFramer(sink: SseSink, maxCarry: number): SseFramer {
  /** The chunks of an event not yet ended, as they came. */
  const pending: Buffer[] = [];
  let pendingBytes = 0;
  let overflowed = false;

  const take = (): Buffer => {
    const buf = pending.length === 1 ? pending[0] : Buffer.concat(pending, pendingBytes);
    pending.length = 0;
    pendingBytes = 0;
    return buf;
  };

  return {
    push(chunk) {
      let buf = chunk;
      if (pending.length > 0) {
        const last = pending[pending.length - 1];
        // A chunk with no blank line of its own ends nothing, unless one spans the join.
        if (
          lastBoundary(chunk) === 0 &&
          !(isLineEnd(last[last.length - 1]) && isLineEnd(chunk[0]))
        ) {
          pending.push(chunk);
          pendingBytes += chunk.length;
          if (pendingBytes <= maxCarry) return null;
          overflowed = true;
          return take();
        }
        pending.push(chunk);
        pendingBytes += chunk.length;
        buf = take();
      }
      const end = lastBoundary(buf);
      if (end === 0) {
        if (buf.length > maxCarry) {
          overflowed = true;
          return buf;
        }
        pending.push(buf);
        pendingBytes = buf.length;
        return null;
      }
      // The rest is copied, so that a few bytes kept do not hold a whole chunk's memory.
      if (end < buf.length) {
        pending.push(Buffer.from(buf.subarray(end)));
        pendingBytes = buf.length - end;
      }
      cut(buf, end, sink, true);
      return end === buf.length ? buf : buf.subarray(0, end);
    },
    flush() {
      if (pending.length === 0) return null;
      const buf = take();
      cut(buf, buf.length, sink, false);
      return buf.length > 0 ? buf : null;
    },
    get overflowed() {
      return overflowed;
    },
  };
}
