/**
 * What the Messages and Responses dialects share: their streams are named events (`event:
 * <type>` then `data: <json>`, a blank line after) with usage always in them, relayed as they
 * come (named-event-relay.ts) or rebuilt into a plain answer (named-event-rebuild.ts). What
 * differs, which events are a token's and what the others say, each dialect describes as
 * `NamedEvents`.
 */
import type { Usage } from "../../core/events.ts";
import { asObj, type Json } from "../../util/json-object.ts";
import type { RebuiltResponse, StreamPlan, UpstreamStream } from "./dialect.ts";

/** What the scheduler needs from one answer, read from its events as they pass. */
export interface EventTurn {
  /** One event, parsed (`name` is its `event:` line, else its data's `type`). */
  event(name: string, doc: Json): void;
  /**
   * An event read from its text alone, without parsing it (true when it was): a relayed
   * stream's events may be large, and a few of them say what is needed in their first bytes.
   */
  glance(name: string, data: string): boolean;
  readonly usage: Usage | null;
  /** The turn was the program's final answer. */
  readonly stopped: boolean;
  /** The response's id (where it is stored), once an event named it; else null. */
  readonly responseId: string | null;
}

/** The plain answer being rebuilt from a stream's events. */
export interface EventAnswer {
  /**
   * A token's delta, read from its text (true when it was: nothing more to do with it); false
   * sends it on to `event` parsed. Null when the answer never reads a delta (its last event
   * holds it whole): then a delta's data is not even decoded.
   */
  readonly delta: ((data: string) => boolean) | null;
  /** Any other event, parsed (the turn has read it already). */
  event(name: string, doc: Json): void;
  /** A stream's `error` event as the plain answer: its status, in the dialect's envelope. */
  error(doc: Json): RebuiltResponse;
  /** The answer once the stream ended; null when it made none. */
  finish(): RebuiltResponse | null;
}

export interface NamedEvents {
  /** Whether the event named by buf[a, b) is a token's (counted, never parsed by the relay). */
  isTokenName(buf: Buffer, a: number, b: number): boolean;
  /** The same, for a name already decoded. */
  isToken(name: string): boolean;
  /** The events the turn reads; a relay passes the others on without decoding them. */
  readonly read: ReadonlySet<string>;
  turn(): EventTurn;
  answer(): EventAnswer;
}

/** An event's data as a JSON object; undefined when it is none. */
export function eventDoc(data: string): Json | undefined {
  try {
    return asObj(JSON.parse(data));
  } catch {
    return undefined;
  }
}

export function startsWith(buf: Buffer, at: number, end: number, prefix: Buffer): boolean {
  if (end - at < prefix.length) return false;
  for (let k = 0; k < prefix.length; k++) if (buf[at + k] !== prefix[k]) return false;
  return true;
}

/** The two plans, made once: a request's plan is read, never changed. */
const REBUILT: StreamPlan = {
  put: [["stream", true]],
  rebuild: { toolCallContent: null },
  clientWantsUsage: true,
};
const RELAYED: StreamPlan = { put: [], rebuild: null, clientWantsUsage: true };

/**
 * Their streams always carry usage; a plain request is streamed and rebuilt, but for a
 * background response (answered at once, before it runs), which has nothing to stream.
 */
export function namedEventStreamPlan(
  body: Json,
  stream: boolean,
  upstreamStream: UpstreamStream,
): StreamPlan {
  return !stream && upstreamStream === "always" && body.background !== true ? REBUILT : RELAYED;
}
