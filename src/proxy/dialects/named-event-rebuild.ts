/**
 * Rebuilds the plain answer of a Messages or Responses request from the backend's stream, for
 * a client that asked for no stream (maitred streams every request it can: the stream is how
 * the scheduler sees the first token and the progress; prepare-request.ts). The dialect's
 * answer (`NamedEvents.answer`) builds its body from the events; its turn reads the usage and
 * how the turn ended from the same events. An `error` event becomes the answer with its status.
 * Events are cut by the proxy's SSE framer (sse-framer.ts); an event without an `event:` line
 * is named by its data's `type`.
 */
import { createSseFramer } from "../sse-framer.ts";
import type { AnswerRebuilder, ContentHooks, RebuiltResponse } from "./dialect.ts";
import { eventDoc, type NamedEvents, startsWith } from "./named-events.ts";

/** The data's own `type`, which names an event that has no `event:` line. */
const TYPE = /"type"\s*:\s*"([^"]+)"/;

const EVENT = Buffer.from("event:");
const DATA = Buffer.from("data:");

export function createNamedEventRebuilder(
  events: NamedEvents,
  hooks: ContentHooks,
): AnswerRebuilder {
  const turn = events.turn();
  const answer = events.answer();
  let contentEvents = 0;
  let error: RebuiltResponse | null = null;

  /** An event that is no token's delta, or a delta the answer could not read from its text. */
  const onEvent = (name: string, data: string) => {
    const doc = eventDoc(data);
    if (doc === undefined) return;
    turn.event(name, doc);
    if (name === "error") {
      error = answer.error(doc);
      return;
    }
    answer.event(name, doc);
  };

  /**
   * The event being read: its name (null: none, or an empty one), and where its one `data:`
   * line's value lies (decoded only when it is read), or its `data:` lines joined.
   */
  let name: string | null = null;
  let lines = 0;
  let dataA = 0;
  let dataB = 0;
  let joined = "";
  // A plain answer waits for the whole stream anyway: an event of any size is read.
  const framer = createSseFramer(
    {
      line(buf, i, stop) {
        const event = startsWith(buf, i, stop, EVENT);
        if (!event && !startsWith(buf, i, stop, DATA)) return;
        let a = i + (event ? EVENT.length : DATA.length);
        if (buf[a] === 0x20) a++;
        if (event) name = a === stop ? null : buf.toString("utf8", a, stop);
        else if (lines++ === 0) {
          dataA = a;
          dataB = stop;
        } else {
          if (lines === 2) joined = buf.toString("utf8", dataA, dataB);
          joined = `${joined}\n${buf.toString("utf8", a, stop)}`;
        }
      },
      end(buf) {
        const n = lines;
        const named = name;
        lines = 0;
        name = null;
        if (n === 0) return;
        // A token's delta the answer never reads is counted without its data decoded.
        if (named !== null && answer.delta === null && events.isToken(named)) {
          contentEvents++;
          return;
        }
        const data = n === 1 ? buf.toString("utf8", dataA, dataB) : joined;
        joined = "";
        let type = named;
        if (type === null) {
          const m = TYPE.exec(data);
          type = m === null ? "" : m[1];
        }
        if (events.isToken(type)) {
          contentEvents++;
          if (answer.delta === null || answer.delta(data)) return;
        }
        onEvent(type, data);
      },
    },
    Number.POSITIVE_INFINITY,
  );

  return {
    push(chunk) {
      const before = contentEvents;
      framer.push(chunk);
      if (contentEvents !== before) hooks.onContent(contentEvents, before);
    },
    finish() {
      framer.flush();
      if (error !== null) return error;
      return answer.finish();
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
