/**
 * One completion request, in the order it goes: read the body → resolve its identity → seat it
 * in the core (it may wait while parked) → forward it to the chosen backend → relay or rebuild
 * the answer → finish (the try ends in the core exactly once, then the request is reported).
 * A try whose connection failed before the client got a byte goes once more round seat →
 * forward → finish, on another backend.
 *
 * Errors raised before anything was written are thrown to the app's error handler (the one
 * envelope mapping); after that the stream gets an SSE error event, as vLLM does mid-stream.
 * With priorities on nothing is written before the core commits the first byte, so a request
 * preempted before it is always answered with a clean 503 envelope. A stream the core holds is
 * the exception (held-stream.ts): its head and comments go out while it waits, and an error
 * that ends the hold is its error event.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Errors } from "../../errors.ts";
import { createRequestFlow } from "../../runtime/request-flow.ts";
import type { AccessEntry } from "../access-log.ts";
import type { Dialect } from "../dialects/dialect.ts";
import type { HeldStream } from "../held-stream.ts";
import { type PreparedRequest, prepareRequest } from "../prepare-request.ts";
import type { ProxyDeps } from "../proxy-deps.ts";
import { readBody } from "../read-body.ts";
import { classifyFailure, type Failure, ForwardError } from "../upstream-failure.ts";
import type { Attempt, Client } from "./attempt.ts";
import { endTry, report } from "./finish.ts";
import { forward } from "./forward.ts";
import { seat } from "./seat.ts";

export async function handleCompletion(
  deps: ProxyDeps,
  dialect: Dialect,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  requestId: string,
  access: AccessEntry | null = null,
): Promise<void> {
  if (deps.isStopping()) throw Errors.shuttingDown();
  // Read: the body is held against the budget until the request ends.
  const raw = await readBody(incoming, deps.maxBodySize, deps.bodyBudget);
  try {
    // Identity: who sent it, for which program, in which class, and what goes upstream.
    const req = prepareRequest(
      dialect,
      raw,
      incoming.headers,
      deps.identityOrder,
      deps.priority,
      deps.upstreamStream,
      deps.callers,
      deps.budgets,
      deps.responseHomes ?? null,
    );
    // A draining cell finishes the programs it has; a new one (or a request of no program)
    // belongs on a cell that stays, where the balancer sends the client's retry.
    if (
      deps.phase() === "draining" &&
      (req.programKey === null || deps.loop.scheduler.program(req.programKey) === undefined)
    ) {
      throw Errors.cellDraining(deps.cell);
    }
    // Set before anything is written, so the relayed head and an error envelope both carry it.
    if (req.priorityClass !== null) outgoing.setHeader("x-maitred-class", req.priorityClass);
    await serve(deps, req, { incoming, outgoing, requestId, held: null, access });
  } finally {
    deps.bodyBudget.give(raw.length);
  }
}

/** The request's tries, then its report; a failure is thrown, or ends a stream under way. */
async function serve(deps: ProxyDeps, req: PreparedRequest, client: Client): Promise<void> {
  const arrivedAt = deps.clock.now();
  const ended = deps.inflight.begin();
  let attempt: Attempt | null = null;
  let heldBefore = 0; // a first try's hold, when the request is tried again
  try {
    attempt = await tryOnce(deps, req, client, req.maxWaitMs, false);
    if (attempt.retrying) {
      heldBefore = attempt.heldMs;
      deps.metrics.upstreamRetry();
      deps.logger.warn("retrying on another backend", {
        requestId: client.requestId,
        backend: attempt.grant?.backendId,
        error: attempt.failure?.error.message,
      });
      // The client's max wait bounds the time maitred holds its request, in both tries.
      const held = attempt.grant?.pausedMs ?? 0;
      const left = req.maxWaitMs === undefined ? undefined : Math.max(0, req.maxWaitMs - held);
      attempt = await tryOnce(deps, req, client, left, true);
    }
    if (attempt.failure !== null) {
      if (!client.outgoing.headersSent) throw attempt.failure.error;
      endBrokenStream(client.outgoing, attempt.failure, client.held, req.dialect);
    }
  } finally {
    ended();
    if (attempt !== null) report(deps, req, attempt, arrivedAt, client, heldBefore);
  }
}

/** One try: seat → forward → finish. Never throws: a failure is in `attempt.failure`. */
async function tryOnce(
  deps: ProxyDeps,
  req: PreparedRequest,
  client: Client,
  maxWaitMs: number | undefined,
  retry: boolean,
): Promise<Attempt> {
  const id = deps.newRequestId();
  const attempt: Attempt = {
    id,
    retry,
    grant: null,
    dispatchedAt: null,
    flow: createRequestFlow(deps.loop, id, deps.progressIntervalTokens),
    outcome: "cancelled",
    failure: null,
    retrying: false,
    parkedAt: null,
    heldMs: 0,
  };
  const pending = deps.loop.requests.open(id);
  try {
    // Usually seated while the core handled the arrival: then there is nothing to wait for.
    const seated = seat(deps, req, client, attempt, pending, maxWaitMs);
    attempt.grant = seated instanceof Promise ? await seated : seated;
    attempt.dispatchedAt = deps.clock.now();
    attempt.outcome = await forward(deps, req, attempt.grant, attempt.flow, pending, client);
  } catch (err) {
    attempt.failure =
      err instanceof ForwardError ? err.failure : classifyFailure(err, null, null, false);
    attempt.outcome = attempt.failure.outcome;
  } finally {
    endTry(deps, attempt, client);
  }
  return attempt;
}

/** Headers are out: tell a still-listening client in-band, then end the response. */
function endBrokenStream(
  outgoing: ServerResponse,
  failure: Failure,
  held: HeldStream | null,
  dialect: Dialect,
): void {
  if (failure.outcome === "client_closed" || outgoing.destroyed) {
    outgoing.destroy();
    return;
  }
  if (held?.opened === true && !held.answered) held.fail(failure.error);
  else if (!outgoing.writableEnded) outgoing.end(dialect.errorEvent(failure.error));
}
