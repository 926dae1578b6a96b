/**
 * A stream rebuilt into the plain answer its client asked for: the per-event work of a plain
 * answer is here and in the dialect's rebuild (rebuild-completion.ts,
 * dialects/named-event-rebuild.ts), which reads each event's tokens for the core on the way
 * in. The request commits at its first token: from then on the backend is spending its work
 * on it. A stream with no token (an error event, an empty answer) commits at its end, as a
 * plain body.
 */
import { Errors } from "../../errors.ts";
import type { AnswerRebuilder } from "../dialects/dialect.ts";
import type { PreparedRequest } from "../prepare-request.ts";
import { classifyFailure } from "../upstream-failure.ts";
import type { Answer, Head, Trip } from "./trip.ts";

export class RebuiltAnswer implements Answer {
  private readonly rebuilder: AnswerRebuilder;

  private readonly trip: Trip;
  private readonly head: Head;

  constructor(trip: Trip, head: Head, rebuild: NonNullable<PreparedRequest["rebuild"]>) {
    this.trip = trip;
    this.head = head;
    head.headers["content-type"] = "application/json";
    this.rebuilder = trip.req.dialect.rebuild(
      { flavour: trip.deps.responseFlavour, toolCallContent: rebuild.toolCallContent },
      this,
    );
  }

  get usage() {
    return this.rebuilder.usage;
  }

  /** Tokens read (the rebuild's hook): the first one commits. */
  onContent(count: number, previous: number): void {
    if (previous === 0 && !this.trip.commit()) return;
    this.trip.progress(count, previous);
  }

  data(chunk: Buffer): void {
    if (!this.trip.refused) this.rebuilder.push(chunk);
  }

  end(): void {
    const { trip, rebuilder } = this;
    if (trip.refused) {
      trip.cancelled();
      return;
    }
    const built = rebuilder.finish();
    trip.flow.usage = rebuilder.usage;
    trip.flow.stopped = rebuilder.stopped;
    trip.stored(rebuilder.responseId);
    const backendId = trip.grant.backendId;
    if (built === null) {
      const error = Errors.backendIncomplete(backendId);
      trip.fail({ error, outcome: "upstream_error", kind: "stream" });
      return;
    }
    if (rebuilder.contentEvents === 0 && trip.gated && !trip.flow.commit()) {
      trip.fail(
        classifyFailure(null, trip.pending.cancelReason ?? Errors.preempted(), backendId, true),
      );
      return;
    }
    // An error event in the stream is the backend's error, as a non-2xx status is.
    if (built.status !== 200) trip.deps.metrics.upstreamError("status");
    const body = Buffer.from(built.body);
    this.head.headers["content-length"] = String(body.length);
    trip.outgoing.writeHead(built.status, this.head.headers);
    trip.outgoing.end(body);
    trip.resolve(built.status === 200 ? "ok" : "upstream_error");
  }
}
