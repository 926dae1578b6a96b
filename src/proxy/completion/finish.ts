/**
 * The finish step. Each try ends in the core exactly once, whichever way it ended (success,
 * the backend's error, client gone while parked or mid-stream, timeout, cancel); ThunderAgent
 * left a program REASONING forever on errors, and here that cannot happen. Then the client's
 * request, after one try or two, is reported: its metrics, its access log entry, its profile.
 */

import { answered } from "../held-stream.ts";
import type { PreparedRequest } from "../prepare-request.ts";
import type { ProxyDeps } from "../proxy-deps.ts";
import type { Attempt, Client } from "./attempt.ts";

/** Whether a backend other than `failed` is healthy. */
export function elsewhere(deps: ProxyDeps, failed: string): boolean {
  for (const u of deps.upstreams.all())
    if (u.id !== failed && deps.loop.scheduler.backendHealthy(u.id)) return true;
  return false;
}

/**
 * A try whose connection failed (refused, reset, or closed before the answer ended) before the
 * client received a byte is tried once more (Envoy's `retry_on: connect-failure,reset`). Its
 * backend is out of placement by then (`backend_failure` with `down`), so the core places the
 * program anew, on another backend. A client that left, a cancel, a timeout, an answer that
 * came whole but unusable, or the backend's own error status is not retried, nor is a request
 * when no other backend is healthy (the backend's own failure, a 502, is then the answer).
 */
function retryable(deps: ProxyDeps, attempt: Attempt, client: Client): boolean {
  const { outgoing } = client;
  return (
    !attempt.retry &&
    attempt.failure?.connection === true &&
    attempt.grant !== null &&
    !answered(client.held, outgoing) &&
    !outgoing.destroyed &&
    !deps.isStopping() &&
    elsewhere(deps, attempt.grant.backendId)
  );
}

/** End the try in the core: its backend's failure first, then `request_finished`. */
export function endTry(deps: ProxyDeps, attempt: Attempt, client: Client): void {
  const { loop, clock } = deps;
  const now = clock.now();
  const { grant } = attempt;
  // Held until its grant, or until its end when none came (timeout, shutdown, client gone).
  attempt.heldMs =
    grant !== null ? grant.pausedMs : attempt.parkedAt === null ? 0 : now - attempt.parkedAt;
  loop.requests.close(attempt.id);
  try {
    const failure = attempt.failure;
    if (failure?.kind && grant) {
      const backendId = grant.backendId;
      // Told before the request ends, so the resume its end triggers cannot seat work on a
      // backend that just failed. A failed connection takes the backend out of placement at
      // once when another can take its work (nothing may listen there now); with none left
      // it only counts, so one reset never empties the fleet.
      if (failure.connection === true) {
        const down = elsewhere(deps, backendId);
        loop.send({ kind: "backend_failure", now, backendId, down });
      }
      deps.metrics.upstreamError(failure.kind);
      deps.logger.warn("backend request failed", {
        requestId: client.requestId,
        try: attempt.retry ? 2 : 1,
        backend: backendId,
        outcome: attempt.outcome,
        error: failure.error.message,
      });
    }
    attempt.retrying = retryable(deps, attempt, client);
  } finally {
    // Ended in the core whatever happened above: its step goes on when it is retried.
    attempt.flow.finish(now, attempt.outcome, attempt.retrying);
  }
}

/** The client's request ended (after one or two tries): its latency, first token and profile. */
export function report(
  deps: ProxyDeps,
  req: PreparedRequest,
  attempt: Attempt,
  arrivedAt: number,
  client: Client,
  heldBefore: number,
): void {
  const now = deps.clock.now();
  deps.metrics.requestFinished(req.dialect.name, attempt.outcome, (now - arrivedAt) / 1000);
  const { firstTokenAt, lastTokenAt, usage } = attempt.flow;
  const access = client.access;
  if (access !== null) {
    access.programId = req.identity.programId;
    access.priorityClass = req.priorityClass;
    access.backend = attempt.grant?.backendId ?? null;
    access.heldMs = heldBefore + attempt.heldMs;
    access.ttftMs = firstTokenAt === null ? null : firstTokenAt - arrivedAt;
    access.usage = usage;
    if (attempt.failure !== null) access.errorCode = attempt.failure.error.code;
  }
  if (firstTokenAt !== null)
    deps.metrics.firstToken(req.dialect.name, (firstTokenAt - arrivedAt) / 1000);
  if (deps.profiler && req.programKey !== null && attempt.grant) {
    deps.profiler.record({
      programId: req.programKey,
      arrivedAt,
      dispatchedAt: attempt.dispatchedAt,
      firstTokenAt,
      lastTokenAt,
      endedAt: now,
      pausedMs: attempt.grant.pausedMs,
      streamed: req.stream,
      usage,
      outcome: attempt.outcome,
    });
  }
}
