/**
 * The forward step: one granted request goes to its backend, and the backend's head decides,
 * in one place, how its answer reaches the client:
 * - a stream the client asked for is relayed event by event (relayed-answer.ts);
 * - a stream for a client that asked for a plain answer is rebuilt into it (rebuilt-answer.ts);
 * - any other body (an error, or a request that went as the client sent it) is gathered and
 *   relayed whole once complete (whole-answer.ts), so one that breaks half-way can still
 *   become a clean error envelope.
 * Status and headers pass through as the backend sent them (hop-by-hop headers aside), written
 * straight to Node's ServerResponse with backpressure.
 *
 * The call ends one of four ways, each settling the returned promise once: the backend finished
 * (→ outcome), the backend failed, the client left (→ client_closed), or maitred cancelled it
 * (core `cancel`). The failures reject with a ForwardError carrying the classification.
 *
 * With priorities on, nothing is written (not even an SSE head) until the core commits the
 * request's first byte (`commit`): a request preempted before that is answered by its cancel
 * with a plain 503 envelope rather than a broken stream.
 *
 * A stream that was held has its SSE head out already (held-stream.ts): what the head would
 * have said becomes a comment before the first event, and a body the backend sent instead of
 * a stream becomes an event.
 *
 * A request continuing another caller's stored response never reaches its backend: the answer
 * it gets is the one a backend gives for an id it does not store, played through the same
 * trip, so that nothing about it differs from an unknown id's (unknown-response.ts).
 */
import type { RequestOutcome } from "../../core/events.ts";
import { Errors } from "../../errors.ts";
import type { RequestFlow } from "../../runtime/request-flow.ts";
import type { Grant, PendingRequest } from "../../runtime/request-table.ts";
import { forwardRequestHeaders } from "../headers.ts";
import { type PreparedRequest, withPriority } from "../prepare-request.ts";
import type { ProxyDeps } from "../proxy-deps.ts";
import { replayUnknownResponse } from "../unknown-response.ts";
import { callUpstream, type UpstreamCall } from "../upstream-call.ts";
import type { Client } from "./attempt.ts";
import { RebuiltAnswer } from "./rebuilt-answer.ts";
import { RelayedAnswer } from "./relayed-answer.ts";
import { type Answer, type Head, Trip } from "./trip.ts";
import { WholeAnswer } from "./whole-answer.ts";

export function forward(
  deps: ProxyDeps,
  req: PreparedRequest,
  grant: Grant,
  flow: RequestFlow,
  pending: PendingRequest,
  client: Client,
): Promise<RequestOutcome> {
  const upstream = deps.upstreams.get(grant.backendId);
  if (!upstream)
    return Promise.reject(Errors.internal(`Scheduler chose unknown backend ${grant.backendId}`));
  const body = withPriority(req, grant.priority);
  return new Promise<RequestOutcome>((resolve, reject) => {
    const trip = new Trip(
      deps,
      req,
      grant,
      flow,
      pending,
      client.outgoing,
      client.held,
      pickAnswer,
    );
    trip.resolve = resolve;
    trip.reject = reject;
    trip.call =
      req.previousResponseForeign && req.previousResponseId !== null
        ? unknownResponse(deps, req.previousResponseId, client.requestId, trip)
        : callUpstream(
            upstream,
            {
              path: withQuery(req.dialect.path, client.incoming.url),
              headers: forwardRequestHeaders(
                client.incoming.headers,
                body.length,
                client.requestId,
              ),
              body,
            },
            trip,
          );
    pending.onCancel = trip.abort;
    client.outgoing.on("close", trip.onClientClose);
    if (pending.cancelReason) trip.abort(pending.cancelReason);
    else if (client.outgoing.destroyed) trip.abort(Errors.clientClosed());
  });
}

/**
 * A request continuing another caller's stored response is answered as the granted backend
 * answers an id it does not store, without asking it (unknown-response.ts).
 */
function unknownResponse(
  deps: ProxyDeps,
  responseId: string,
  requestId: string,
  trip: Trip,
): UpstreamCall {
  deps.logger.warn("stored response of another caller answered as unknown", {
    requestId,
    responseId,
    method: "POST",
  });
  return replayUnknownResponse(responseId, trip);
}

/**
 * The backend's path with the client's query string: Claude Code sends `/v1/messages?beta=true`,
 * and what the query says is the backend's to read.
 */
export function withQuery(path: string, url: string | undefined): string {
  const q = url?.indexOf("?") ?? -1;
  return q < 0 || url === undefined ? path : path + url.slice(q);
}

/** The one place the backend's head decides how its answer reaches the client. */
function pickAnswer(trip: Trip, head: Head, sse: boolean): Answer {
  const { req } = trip;
  if (sse && req.rebuild !== null) return new RebuiltAnswer(trip, head, req.rebuild);
  if (sse && req.stream) return new RelayedAnswer(trip, head);
  return new WholeAnswer(trip, head);
}
