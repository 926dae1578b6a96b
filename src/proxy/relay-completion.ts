/**
 * One completion request, from body to the last byte:
 * admit through the core, wait while parked, forward with undici, relay the answer, and end
 * the request in ONE `finally` that always sends exactly one `request_finished` — success,
 * upstream error, client gone (parked or mid-stream), timeout or cancel alike
 * (ThunderAgent left a program REASONING forever on errors; here that cannot happen).
 *
 * Responses are written straight to Node's ServerResponse: status, headers and bytes pass
 * through as the backend sent them, chunk by chunk with backpressure. Errors raised before
 * anything was written are thrown to Hono's onError (the one envelope mapping); after that the
 * stream gets an SSE error event, as vLLM does mid-stream.
 * With priorities on nothing is written before the core commits the first byte, so a
 * request preempted before it is always answered with a clean 503 envelope. A stream the core
 * holds is the exception (held-stream.ts): its head and comments go out while it waits, and
 * an error that ends the hold is its error event.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RequestOutcome, SchedulerEvent } from "../core/events.ts";
import { Errors, type MaitredError } from "../errors.ts";
import { createRequestFlow, type RequestFlow } from "../runtime/request-flow.ts";
import type { Grant, PendingRequest } from "../runtime/request-table.ts";
import type { AccessEntry } from "./access-log.ts";
import { forwardToBackend } from "./forward-to-backend.ts";
import { answered, createHeldStream, type HeldStream } from "./held-stream.ts";
import { type Endpoint, type PreparedRequest, prepareRequest } from "./prepare-request.ts";
import type { ProxyDeps } from "./proxy-deps.ts";
import { readBody } from "./read-body.ts";
import { sseErrorEvent } from "./sse-error-event.ts";
import { classifyFailure, type Failure, ForwardError } from "./upstream-failure.ts";

type Arrival = Extract<SchedulerEvent, { kind: "request_arrived" }>;

/** Mutable per-request facts the `finally` reports from, whatever path ended the request. */
interface Step {
  id: string;
  grant: Grant | null;
  dispatchedAt: number | null;
  /** First token, progress and usage, told to the core as the answer goes by. */
  flow: RequestFlow;
  outcome: RequestOutcome;
  failure: Failure | null;
  /** It failed in a way that is tried once more, on another backend (`retryable`). */
  retrying: boolean;
  /** When the core parked it (null: dispatched at once), and how long it was held. */
  parkedAt: number | null;
  heldMs: number;
}

export async function relayCompletion(
  deps: ProxyDeps,
  endpoint: Endpoint,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  requestId: string,
  access: AccessEntry | null = null,
): Promise<void> {
  if (deps.isDraining()) throw Errors.shuttingDown();
  const raw = await readBody(incoming, deps.maxBodySize, deps.bodyBudget);
  try {
    await relayRead(deps, endpoint, raw, { incoming, outgoing, requestId, held: null, access });
  } finally {
    deps.bodyBudget.give(raw.length);
  }
}

/** The client's side of one request: its streams, and the id its log lines carry. */
interface Call {
  incoming: IncomingMessage;
  outgoing: ServerResponse;
  requestId: string;
  /** Made the first time the core holds the request, if it streams (held-stream.ts). */
  held: HeldStream | null;
  /** Its access log entry; null when the log is off. */
  access: AccessEntry | null;
}

/** The request once its body is read (and held against the body budget). */
async function relayRead(
  deps: ProxyDeps,
  endpoint: Endpoint,
  raw: Buffer,
  call: Call,
): Promise<void> {
  const { incoming, outgoing } = call;
  const req = prepareRequest(
    endpoint,
    raw,
    incoming.headers,
    deps.identityOrder,
    deps.priority,
    deps.upstreamStream,
    deps.callers,
  );
  const { clock } = deps;
  // Set before anything is written, so the relayed head and an error envelope both carry it.
  if (req.priorityClass !== null) outgoing.setHeader("x-maitred-class", req.priorityClass);
  const arrivedAt = clock.now();
  const ended = deps.inflight.begin();
  let step: Step | null = null;
  let heldBefore = 0; // a first try's hold, when the request is tried again
  try {
    step = await tryBackend(deps, req, call, req.maxWaitMs);
    if (step.retrying) {
      heldBefore = step.heldMs;
      deps.metrics.upstreamRetry();
      deps.logger.warn("retrying on another backend", {
        requestId: call.requestId,
        backend: step.grant?.backendId,
        error: step.failure?.error.message,
      });
      // The client's max wait bounds the time maitred holds its request, in both tries.
      const held = step.grant?.pausedMs ?? 0;
      const left = req.maxWaitMs === undefined ? undefined : Math.max(0, req.maxWaitMs - held);
      step = await tryBackend(deps, req, call, left, true);
    }
    if (step.failure !== null) {
      if (!outgoing.headersSent) throw step.failure.error;
      endBrokenStream(outgoing, step.failure, call.held);
    }
  } finally {
    ended();
    if (step !== null) report(deps, req, step, arrivedAt, clock.now(), call.access, heldBefore);
  }
}

/** Whether a backend other than `failed` is healthy. */
function elsewhere(deps: ProxyDeps, failed: string): boolean {
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
function retryable(deps: ProxyDeps, step: Step, call: Call): boolean {
  const { outgoing } = call;
  return (
    step.failure?.connection === true &&
    step.grant !== null &&
    !answered(call.held, outgoing) &&
    !outgoing.destroyed &&
    !deps.isDraining() &&
    elsewhere(deps, step.grant.backendId)
  );
}

/**
 * One try: the core admits the request (it may wait while parked), the chosen backend answers,
 * and the request ends in the core exactly once, whatever happened. Never throws: a failure is
 * in `step.failure`.
 */
async function tryBackend(
  deps: ProxyDeps,
  req: PreparedRequest,
  call: Call,
  maxWaitMs: number | undefined,
  retry = false,
): Promise<Step> {
  const { loop, clock } = deps;
  const { outgoing } = call;
  const id = deps.newRequestId();
  const step: Step = {
    id,
    grant: null,
    dispatchedAt: null,
    flow: createRequestFlow(loop, id, deps.progressIntervalTokens),
    outcome: "cancelled",
    failure: null,
    retrying: false,
    parkedAt: null,
    heldMs: 0,
  };
  const pending = loop.requests.open(step.id);
  try {
    const arrived: Arrival = {
      kind: "request_arrived",
      now: clock.now(),
      requestId: step.id,
      programId: req.programKey,
      parentProgramId: req.parentKey ?? undefined,
      messageChars: req.messageChars,
      final: req.identity.final,
      maxWaitMs,
    };
    if (retry) arrived.retry = true;
    if (req.priorityClass !== null) {
      arrived.priorityClass = req.priorityClass;
      arrived.classClamped = req.classClamped;
    }
    loop.send(arrived);
    if (pending.status === "waiting") {
      step.parkedAt = clock.now();
      deps.onParked();
      if (req.stream && deps.holdKeepalive) {
        call.held ??= createHeldStream(deps, outgoing, req.identity.programId);
        call.held.hold(step.id);
      }
    }
    // Usually granted while the core handled the arrival: no promise, no wait.
    step.grant =
      pending.status === "dispatched"
        ? (pending.grant as Grant)
        : await waitForGrant(pending, outgoing, call.held);
    step.dispatchedAt = clock.now();
    step.outcome = await forwardToBackend(
      deps,
      req,
      step.grant,
      step.flow,
      pending,
      call.incoming,
      outgoing,
      call.requestId,
      call.held,
    );
  } catch (err) {
    step.failure =
      err instanceof ForwardError ? err.failure : classifyFailure(err, null, null, false);
    step.outcome = step.failure.outcome;
  } finally {
    const now = clock.now();
    // Held until its grant, or until its end when none came (timeout, shutdown, client gone).
    step.heldMs =
      step.grant !== null ? step.grant.pausedMs : step.parkedAt === null ? 0 : now - step.parkedAt;
    loop.requests.close(step.id);
    try {
      const failure = step.failure;
      if (failure?.kind && step.grant) {
        const backendId = step.grant.backendId;
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
          requestId: call.requestId,
          try: retry ? 2 : 1,
          backend: backendId,
          outcome: step.outcome,
          error: failure.error.message,
        });
      }
      step.retrying = !retry && retryable(deps, step, call);
    } finally {
      // Ended in the core whatever happened above: its step goes on when it is retried.
      step.flow.finish(now, step.outcome, step.retrying);
    }
  }
  return step;
}

/** The client's request ended (after one or two tries): its latency, first token and profile. */
function report(
  deps: ProxyDeps,
  req: PreparedRequest,
  step: Step,
  arrivedAt: number,
  now: number,
  access: AccessEntry | null,
  heldBefore: number,
): void {
  deps.metrics.requestFinished(req.endpoint, step.outcome, (now - arrivedAt) / 1000);
  const { firstTokenAt, lastTokenAt, usage } = step.flow;
  if (access !== null) {
    access.programId = req.identity.programId;
    access.priorityClass = req.priorityClass;
    access.backend = step.grant?.backendId ?? null;
    access.heldMs = heldBefore + step.heldMs;
    access.ttftMs = firstTokenAt === null ? null : firstTokenAt - arrivedAt;
    access.usage = usage;
    if (step.failure !== null) access.errorCode = step.failure.error.code;
  }
  if (firstTokenAt !== null)
    deps.metrics.firstToken(req.endpoint, (firstTokenAt - arrivedAt) / 1000);
  if (deps.profiler && req.programKey !== null && step.grant) {
    deps.profiler.record({
      programId: req.programKey,
      arrivedAt,
      dispatchedAt: step.dispatchedAt,
      firstTokenAt,
      lastTokenAt,
      endedAt: now,
      pausedMs: step.grant.pausedMs,
      streamed: req.stream,
      usage,
      outcome: step.outcome,
    });
  }
}

/**
 * The grant, or why there is none. Usually the core dispatched during `request_arrived` and
 * this returns at once; a parked request waits for `dispatch` or `reject` (its own
 * `x-maitred-max-wait-ms` is one of the core's deadlines, like every other wait bound), or for
 * the client leaving (→ client_closed). A held stream's keep-alive ends with the wait.
 */
function waitForGrant(
  pending: PendingRequest,
  outgoing: ServerResponse,
  held: HeldStream | null,
): Promise<Grant> {
  if (pending.status !== "waiting") return pending.granted;
  if (outgoing.destroyed) return Promise.reject(Errors.clientClosed());
  return new Promise<Grant>((resolve, reject) => {
    const onClose = () => {
      held?.release();
      reject(Errors.clientClosed());
    };
    outgoing.on("close", onClose);
    pending.granted.then(
      (g) => {
        outgoing.off("close", onClose);
        held?.release();
        resolve(g);
      },
      (e: MaitredError) => {
        outgoing.off("close", onClose);
        held?.release();
        reject(e);
      },
    );
  });
}

/** Headers are out: tell a still-listening client in-band, then end the response. */
function endBrokenStream(
  outgoing: ServerResponse,
  failure: Failure,
  held: HeldStream | null,
): void {
  if (failure.outcome === "client_closed" || outgoing.destroyed) {
    outgoing.destroy();
    return;
  }
  if (held?.opened === true && !held.answered) held.fail(failure.error);
  else if (!outgoing.writableEnded) outgoing.end(sseErrorEvent(failure.error));
}
