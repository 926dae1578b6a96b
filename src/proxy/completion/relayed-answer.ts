/**
 * A stream the client asked for, relayed event by event: the per-event work of a streamed
 * answer is here and in the dialect's relay (sse-relay.ts, dialects/named-event-relay.ts),
 * which cuts the backend's bytes at event boundaries, counts content events as tokens for the
 * core and reads the usage.
 *
 * One socket read often carries many events; they are gathered and written once per tick
 * instead of one syscall per event (measured: the syscall dominates on loopback).
 */
import type { AnswerRelay } from "../dialects/dialect.ts";
import type { Answer, Head, Trip } from "./trip.ts";

export class RelayedAnswer implements Answer {
  private readonly relay: AnswerRelay;
  private readonly batch: Buffer[] = [];

  private readonly trip: Trip;

  constructor(trip: Trip, head: Head) {
    this.trip = trip;
    // Gated: written at the commit, with the first chunk.
    if (trip.gated) trip.head = head;
    else trip.writeHead(head, true);
    this.relay = trip.req.dialect.relay(trip.req.clientWantsUsage, this);
  }

  get usage() {
    return this.relay.usage;
  }

  /** Content events passed (the relay's hook). */
  onContent(count: number, previous: number): void {
    this.trip.progress(count, previous);
  }

  data(chunk: Buffer): void {
    const trip = this.trip;
    if (trip.head !== null && !trip.commitHead(true)) return;
    if (trip.refused) return;
    const out = this.relay.push(chunk);
    if (out === null) return;
    if (trip.opened !== null) trip.opened.answered = true;
    this.batch.push(out);
    if (this.batch.length === 1) process.nextTick(flush, this);
  }

  end(): void {
    const trip = this.trip;
    if (trip.refused || (trip.head !== null && !trip.commitHead(true))) {
      trip.cancelled();
      return;
    }
    const rest = this.relay.flush();
    if (rest !== null) this.batch.push(rest);
    this.write();
    trip.flow.usage = this.relay.usage;
    trip.flow.stopped = this.relay.stopped;
    trip.stored(this.relay.responseId);
    trip.outgoing.end();
    trip.resolve("ok");
  }

  /** Write what was gathered; a client that is not reading pauses the backend. */
  write(): void {
    const { batch, trip } = this;
    if (batch.length === 0 || trip.outgoing.destroyed) return;
    const data = batch.length === 1 ? batch[0] : Buffer.concat(batch);
    batch.length = 0;
    if (!trip.outgoing.write(data)) trip.waitForDrain();
  }
}

function flush(answer: RelayedAnswer): void {
  answer.write();
}
