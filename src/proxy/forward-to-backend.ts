/**
 * Forward one granted request to its backend and relay the answer to the client, written
 * straight to Node's ServerResponse: status, headers and bytes pass through as the backend sent
 * them (hop-by-hop headers aside), streamed chunk by chunk with backpressure. SSE is watched on
 * the way for first token, progress and usage (sse-relay.ts); a non-streamed body is relayed
 * whole once complete, its usage read from it.
 *
 * The call can end four ways, each settling the returned promise once: the backend finished
 * (→ outcome), the backend failed, the client left (→ client_closed), or maitred cancelled it
 * (core `cancel`). The failures reject with a ForwardError carrying the classification.
 *
 * With priorities on, nothing is written (not even an SSE head) until the core commits the
 * request's first byte (`tryCommitFirstByte`): a request preempted before that is
 * answered by its cancel with a plain 503 envelope rather than a broken stream.
 */
import type {
  IncomingHttpHeaders,
  IncomingMessage,
  OutgoingHttpHeaders,
  ServerResponse,
} from "node:http";
import type { RequestOutcome, Usage } from "../core/events.ts";
import { Errors, type MaitredError } from "../errors.ts";
import type { Grant, PendingRequest } from "../runtime/request-table.ts";
import { forwardRequestHeaders, relayResponseHeaders } from "./headers.ts";
import { ENDPOINT_PATHS, type PreparedRequest } from "./prepare-request.ts";
import type { ProxyDeps } from "./proxy-deps.ts";
import { createSseRelay, type SseRelay } from "./sse-relay.ts";
import { callUpstream } from "./upstream-call.ts";
import { classifyFailure, ForwardError } from "./upstream-failure.ts";
import { usageFrom } from "./usage.ts";

/** What the request's `finally` reports from, filled in as the response goes by. */
export interface StepFacts {
  id: string;
  firstTokenAt: number | null;
  lastTokenAt: number | null;
  usage: Usage | null;
}

function maitredHeaders(headers: OutgoingHttpHeaders, req: PreparedRequest, grant: Grant): void {
  if (req.identity.programId !== null)
    headers["x-maitred-program"] = encodeURIComponent(req.identity.programId);
  headers["x-maitred-backend"] = grant.backendId;
  headers["x-maitred-paused-ms"] = String(Math.round(grant.pausedMs));
}

export function forwardToBackend(
  deps: ProxyDeps,
  req: PreparedRequest,
  grant: Grant,
  step: StepFacts,
  pending: PendingRequest,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
): Promise<RequestOutcome> {
  const upstream = deps.upstreams.get(grant.backendId);
  if (!upstream)
    return Promise.reject(Errors.internal(`Scheduler chose unknown backend ${grant.backendId}`));
  return new Promise<RequestOutcome>((resolve, reject) => {
    let responded = false;
    let ok = false;
    let relay: SseRelay | null = null;
    let parts: Buffer[] | null = null;
    let held: { status: number; headers: OutgoingHttpHeaders } | null = null;
    let abortReason: MaitredError | null = null;

    const cleanup = () => {
      pending.onCancel = null;
      outgoing.off("close", onClientClose);
    };
    const abort = (reason: MaitredError) => {
      abortReason ??= reason;
      call.abort(reason);
    };
    // Priorities on: a request may be preempted until its first byte is committed (a
    // request that has started answering is never preempted), so the head and first bytes wait for the core's compare-and-set.
    const gated = deps.priority !== null;
    let refused = false;
    /** Write the held head, after the commit when gated; false = cancelled, write nothing. */
    const commitHead = (): boolean => {
      const h = held as { status: number; headers: OutgoingHttpHeaders };
      held = null;
      if (gated && !deps.loop.tryCommitFirstByte(step.id)) {
        refused = true;
        // The cancel effect normally aborted the call already; this covers any other refusal.
        abort(pending.cancelReason ?? Errors.preempted());
        return false;
      }
      outgoing.writeHead(h.status, h.headers);
      if (parts === null) outgoing.flushHeaders();
      return true;
    };
    const onClientClose = () => {
      if (!outgoing.writableFinished) abort(Errors.clientClosed());
    };
    const resume = () => call.resume();
    const batch: Buffer[] = [];
    const flushBatch = () => {
      if (batch.length === 0 || outgoing.destroyed) return;
      const data = batch.length === 1 ? batch[0] : Buffer.concat(batch);
      batch.length = 0;
      if (!outgoing.write(data)) {
        call.pause();
        outgoing.once("drain", resume);
      }
    };

    const call = callUpstream(
      upstream,
      {
        path: ENDPOINT_PATHS[req.endpoint],
        headers: forwardRequestHeaders(incoming.headers, req.body.length),
        body: req.body,
      },
      {
        onStart(status: number, upstreamHeaders: IncomingHttpHeaders) {
          responded = true;
          ok = status >= 200 && status < 300;
          const contentType = String(upstreamHeaders["content-type"] ?? "");
          const sse = ok && req.stream && contentType.includes("text/event-stream");
          const headers = relayResponseHeaders(upstreamHeaders, sse);
          maitredHeaders(headers, req, grant);
          if (!ok) deps.metrics.upstreamError("status");
          // While draining, each response closes its connection so shutdown need not wait
          // for keep-alive timeouts (Node keeps connections alive after server.close()).
          if (deps.isDraining()) outgoing.shouldKeepAlive = false;
          if (!sse) {
            // Written with the body in onEnd: a body that breaks half-way must still be able
            // to become a clean error envelope.
            parts = [];
            held = { status, headers };
            return;
          }
          if (gated)
            held = { status, headers }; // written at the commit, with the first chunk
          else {
            outgoing.writeHead(status, headers);
            outgoing.flushHeaders();
          }
          relay = createSseRelay(!req.clientWantsUsage, {
            onContent(count, previous) {
              const now = deps.clock.now();
              step.lastTokenAt = now;
              if (previous === 0) {
                step.firstTokenAt = now;
                deps.loop.send({ kind: "request_first_token", now, requestId: step.id });
              }
              // One call per upstream chunk, which may carry several events.
              const every = deps.progressIntervalTokens;
              if (Math.floor(count / every) > Math.floor(previous / every)) {
                deps.loop.send({
                  kind: "request_progress",
                  now,
                  requestId: step.id,
                  completionTokens: count,
                });
              }
            },
          });
        },
        onData(chunk: Buffer) {
          if (parts !== null) {
            parts.push(chunk);
            return;
          }
          if (held !== null && !commitHead()) return;
          if (refused) return;
          const out = relay?.push(chunk) ?? null;
          if (out === null) return;
          // One socket read often carries many events; gather them and write once per tick
          // instead of one syscall per event (measured: the syscall dominates on loopback).
          batch.push(out);
          if (batch.length === 1) process.nextTick(flushBatch);
        },
        onEnd() {
          cleanup();
          if (refused || (held !== null && !commitHead())) {
            // Cancelled before its first byte: nothing was written, the cancel answers it.
            reject(new ForwardError(classifyFailure(null, abortReason, grant.backendId, true)));
            return;
          }
          if (parts !== null) {
            const body = parts.length === 1 ? parts[0] : Buffer.concat(parts);
            if (ok) step.usage = usageOfBody(body);
            outgoing.end(body);
          } else {
            const rest = relay?.flush() ?? null;
            if (rest !== null) batch.push(rest);
            flushBatch();
            step.usage = relay?.usage ?? null;
            outgoing.end();
          }
          resolve(ok ? "ok" : "upstream_error");
        },
        onError(err: Error) {
          cleanup();
          outgoing.off("drain", resume);
          step.usage = relay?.usage ?? null;
          // Whatever undici threw because of our abort, the abort's reason is the real story.
          reject(new ForwardError(classifyFailure(err, abortReason, grant.backendId, responded)));
        },
      },
    );
    pending.onCancel = abort;
    outgoing.on("close", onClientClose);
    if (pending.cancelReason) abort(pending.cancelReason);
    else if (outgoing.destroyed) abort(Errors.clientClosed());
  });
}

/** Usage from a JSON body, parsing only the `usage` object when it can be found cheaply. */
export function usageOfBody(body: Buffer): Usage | null {
  const at = body.lastIndexOf('"usage"');
  if (at >= 0) {
    // Escaped quotes inside strings (\"usage\") cannot match; require `"usage" : {`.
    let open = skipSpace(body, at + 7);
    if (body[open] === 0x3a) open = skipSpace(body, open + 1); // ':'
    if (body[open] === 0x7b) {
      // Usage objects nest at most one level (prompt_tokens_details); find the matching brace.
      let depth = 0;
      for (let i = open; i < body.length; i++) {
        const c = body[i];
        if (c === 0x7b) depth++;
        else if (c === 0x7d && --depth === 0) {
          try {
            return usageFrom({ usage: JSON.parse(body.toString("utf8", open, i + 1)) });
          } catch {
            break;
          }
        }
      }
    }
  }
  try {
    return usageFrom(JSON.parse(body.toString("utf8")));
  } catch {
    return null;
  }
}

function skipSpace(buf: Buffer, i: number): number {
  while (
    i < buf.length &&
    (buf[i] === 0x20 || buf[i] === 0x0a || buf[i] === 0x0d || buf[i] === 0x09)
  )
    i++;
  return i;
}
