/**
 * A body the backend sent whole (its error, or an answer to a request that went as the client
 * sent it): gathered, then written with its head once complete, so that a body that breaks
 * half-way can still become a clean error envelope. Its usage is read from it.
 */
import { stoppedOfBody, usageOfBody } from "../usage.ts";
import type { Answer, Head, Trip } from "./trip.ts";

export class WholeAnswer implements Answer {
  private readonly parts: Buffer[] = [];
  readonly usage = null;

  private readonly trip: Trip;

  constructor(trip: Trip, head: Head) {
    this.trip = trip;
    trip.head = head;
  }

  data(chunk: Buffer): void {
    this.parts.push(chunk);
  }

  end(): void {
    const { trip, parts } = this;
    if (trip.refused || !trip.commitHead(false)) {
      trip.cancelled();
      return;
    }
    const body = parts.length === 1 ? parts[0] : Buffer.concat(parts);
    if (trip.ok) {
      trip.flow.usage = usageOfBody(body);
      trip.flow.stopped = stoppedOfBody(body);
      // A stored response's id (Responses): its backend is where it is stored.
      trip.stored(trip.req.dialect.storedResponseId(body));
    }
    if (trip.opened !== null) trip.opened.endWithBody(trip.status, body);
    else trip.outgoing.end(body);
    trip.resolve(trip.ok ? "ok" : "upstream_error");
  }
}
