/**
 * Watches a stream of named events (Messages, Responses) on its way to the client, relayed
 * byte for byte and cut only at event boundaries (nothing is added or removed: their usage is
 * always in the stream). One pass over the bytes finds each event's name; the token events
 * (one per engine step) are counted for the books without being parsed, and the few others
 * the dialect's turn reads (the message's or response's start and end, a block or item that
 * opens) are parsed and handed to it for the usage, how the turn ended and the response's id.
 * An event without an `event:` line is parsed and named by its data's `type`. Events are cut
 * by the proxy's SSE framer (sse-framer.ts).
 */
import { createSseFramer } from "../sse-framer.ts";
import type { AnswerRelay, ContentHooks } from "./dialect.ts";
import { type EventTurn, eventDoc, type NamedEvents, startsWith } from "./named-events.ts";

/** An event larger than this without a boundary is passed on unparsed (not SSE as we know it). */
const MAX_CARRY_BYTES = 1 << 20;

const EVENT = Buffer.from("event:");
const DATA = Buffer.from("data:");

export function createNamedEventRelay(events: NamedEvents, hooks: ContentHooks): AnswerRelay {
  const turn: EventTurn = events.turn();
  const wanted = events.read;
  let contentEvents = 0;

  /** A non-token event the turn reads (or one not named): parse its data and tell the turn. */
  const read = (name: string | null, data: string) => {
    if (name !== null && turn.glance(name, data)) return;
    const doc = eventDoc(data);
    if (doc === undefined) return;
    const type = name ?? (typeof doc.type === "string" ? doc.type : null);
    if (type !== null) turn.event(type, doc);
  };

  /** The event being read: where its name lies, its data, whether it is a token's. */
  let nameA = -1;
  let nameB = -1;
  let data: string | null = null;
  let token = false;
  /** A named event the turn does not read: its data is not even decoded. */
  let skip = false;

  const framer = createSseFramer(
    {
      line(buf, i, stop) {
        if (startsWith(buf, i, stop, EVENT)) {
          let a = i + EVENT.length;
          if (buf[a] === 0x20) a++;
          nameA = a;
          nameB = stop;
          token = events.isTokenName(buf, a, stop);
          skip = !token && !wanted.has(buf.toString("latin1", a, stop));
        } else if (!token && !skip && startsWith(buf, i, stop, DATA)) {
          let a = i + DATA.length;
          if (buf[a] === 0x20) a++;
          const text = buf.toString("utf8", a, stop);
          data = data === null ? text : `${data}\n${text}`;
        }
      },
      // An unterminated last event (the stream's end) is read as any other.
      end(buf) {
        if (token) contentEvents++;
        else if (data !== null) read(nameA < 0 ? null : buf.toString("latin1", nameA, nameB), data);
        nameA = -1;
        data = null;
        token = false;
        skip = false;
      },
    },
    MAX_CARRY_BYTES,
  );

  return {
    push(chunk) {
      const before = contentEvents;
      const out = framer.push(chunk);
      if (contentEvents !== before) hooks.onContent(contentEvents, before);
      return out;
    },
    flush() {
      const before = contentEvents;
      const out = framer.flush();
      if (contentEvents !== before) hooks.onContent(contentEvents, before);
      return out;
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
