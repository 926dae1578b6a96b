/**
 * The answer to a request naming a stored response its caller may not reach (response-homes.ts
 * `reachable`): what a backend answers for an id it does not store, so the caller cannot tell
 * another tenant's response from one that never existed. The body is the simulated backend's
 * (src/sim-server/dialect-routes.ts), which follows vLLM's: the same message, `param` and
 * `code` (the status, as vLLM writes it), through the one error mapping. Nothing reaches the
 * backend: it stores the response and would hand it over.
 */
import type { IncomingHttpHeaders } from "node:http";
import { Errors, errorBodyJson } from "../errors.ts";
import type { UpstreamCall, UpstreamSink } from "./upstream-call.ts";

export interface UnknownResponseAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A backend's answer to a request naming stored response `responseId`, which it does not have. */
export function unknownResponseAnswer(responseId: string): UnknownResponseAnswer {
  const error = Errors.notFound(`Response with id '${responseId}' not found.`, "response_id");
  const body = Buffer.from(errorBodyJson(error, "status"));
  return {
    status: error.status,
    headers: { "content-type": "application/json", "content-length": String(body.length) },
    body,
  };
}

/**
 * That answer played into `sink` in place of the backend's call, so the request's trip (its
 * head, its held stream, its end in the core) is the one a backend's 404 makes. It arrives
 * on a later microtask, as a backend's does: the trip finishes wiring its call first.
 */
export function replayUnknownResponse(responseId: string, sink: UpstreamSink): UpstreamCall {
  let done = false;
  queueMicrotask(() => {
    if (done) return;
    done = true;
    const answer = unknownResponseAnswer(responseId);
    sink.onStart(answer.status, answer.headers);
    sink.onData(answer.body);
    sink.onEnd();
  });
  return {
    abort(reason) {
      if (done) return;
      done = true;
      queueMicrotask(() => sink.onError(reason));
    },
    // The answer is one small buffer, written whole: nothing to hold back.
    pause() {},
    resume() {},
  };
}
