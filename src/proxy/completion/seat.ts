/**
 * The seat step: the core hears of the request and grants it a backend. Usually it dispatches
 * while it handles the arrival and no promise is made; a parked request waits for `dispatch` or
 * `reject` (its own `x-maitred-max-wait-ms` is one of the core's deadlines, like every other
 * wait bound), or for the client leaving (→ client_closed). A stream the core holds is answered
 * at once and kept alive while it waits (held-stream.ts).
 */
import type { ServerResponse } from "node:http";
import type { SchedulerEvent } from "../../core/events.ts";
import { Errors, type MaitredError } from "../../errors.ts";
import type { Grant, PendingRequest } from "../../runtime/request-table.ts";
import { createHeldStream, type HeldStream } from "../held-stream.ts";
import type { PreparedRequest } from "../prepare-request.ts";
import type { ProxyDeps } from "../proxy-deps.ts";
import type { Attempt, Client } from "./attempt.ts";

type Arrival = Extract<SchedulerEvent, { kind: "request_arrived" }>;

/**
 * Tell the core of the try: its grant at once, or a promise of it, which rejects when the core
 * refuses the request or the client leaves.
 */
export function seat(
  deps: ProxyDeps,
  req: PreparedRequest,
  client: Client,
  attempt: Attempt,
  pending: PendingRequest,
  maxWaitMs: number | undefined,
): Grant | Promise<Grant> {
  const { loop, clock } = deps;
  const arrived: Arrival = {
    kind: "request_arrived",
    now: clock.now(),
    requestId: attempt.id,
    programId: req.programKey,
    parentProgramId: req.parentKey ?? undefined,
    messageChars: req.messageChars,
    final: req.identity.final,
    maxWaitMs,
  };
  if (attempt.retry) arrived.retry = true;
  if (req.budget !== undefined) arrived.budget = req.budget;
  // A stored response lives on the backend that made it: the request is served there or
  // nowhere (src/core/pinned-backend.ts). An id maitred never relayed names no backend, nor
  // does another caller's: pinned, its request would say where that response is stored.
  const home =
    req.previousResponseId === null || req.previousResponseForeign
      ? undefined
      : deps.responseHomes?.get(req.previousResponseId);
  if (home !== undefined) arrived.pinnedBackend = home.backendId;
  if (req.priorityClass !== null) {
    arrived.priorityClass = req.priorityClass;
    arrived.classClamped = req.classClamped;
  }
  loop.send(arrived);
  if (pending.status === "dispatched") return pending.grant as Grant;
  if (pending.status === "waiting") {
    attempt.parkedAt = clock.now();
    deps.onParked();
    if (req.stream && deps.holdKeepalive) {
      client.held ??= createHeldStream(deps, client.outgoing, req.identity.programId, req.dialect);
      client.held.hold(attempt.id);
    }
  }
  return waitForGrant(pending, client.outgoing, client.held);
}

/** The grant of a parked request, or why there is none; the held stream's keep-alive ends. */
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
