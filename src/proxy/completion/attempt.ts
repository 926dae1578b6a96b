/**
 * What the steps of a completion's path share: the client's side of the request (its streams,
 * its id, its held stream and access log entry) and one try's facts (its grant, how it ended),
 * which the last step reports from whichever way the try ended.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RequestOutcome } from "../../core/events.ts";
import type { RequestFlow } from "../../runtime/request-flow.ts";
import type { Grant } from "../../runtime/request-table.ts";
import type { AccessEntry } from "../access-log.ts";
import type { HeldStream } from "../held-stream.ts";
import type { Failure } from "../upstream-failure.ts";

/** The client's side of one request. */
export interface Client {
  incoming: IncomingMessage;
  outgoing: ServerResponse;
  /** `x-request-id`: what its log lines and its forwarded request carry. */
  requestId: string;
  /** Made the first time the core holds the request, if it streams (held-stream.ts). */
  held: HeldStream | null;
  /** Its access log entry; null when the log is off. */
  access: AccessEntry | null;
}

/** One try of a request on a backend: the core's request, from arrival to its one end. */
export interface Attempt {
  /** The core's id for this try. */
  id: string;
  /** The second try, on another backend. */
  retry: boolean;
  grant: Grant | null;
  dispatchedAt: number | null;
  /** First token, progress and usage, told to the core as the answer goes by. */
  flow: RequestFlow;
  outcome: RequestOutcome;
  failure: Failure | null;
  /** It failed in a way that is tried once more, on another backend. */
  retrying: boolean;
  /** When the core parked it (null: dispatched at once), and how long it was held. */
  parkedAt: number | null;
  heldMs: number;
}
