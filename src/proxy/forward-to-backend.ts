/**
 * Forward one granted request to its backend and relay the answer to the client, written
 * straight to Node's ServerResponse: status, headers and bytes pass through as the backend sent
 * them (hop-by-hop headers aside), streamed chunk by chunk with backpressure. SSE is watched on
 * the way for first token, progress and usage (sse-relay.ts). For a client that asked for a
 * plain answer the backend's stream is rebuilt into that answer (rebuild-completion.ts), seen
 * the same way on its way in; a plain body the backend sent anyway (an error, or a request
 * that went as the client sent it) is relayed whole once complete, its usage read from it.
 *
 * The call can end four ways, each settling the returned promise once: the backend finished
 * (→ outcome), the backend failed, the client left (→ client_closed), or maitred cancelled it
 * (core `cancel`). The failures reject with a ForwardError carrying the classification.
 *
 * With priorities on, nothing is written (not even an SSE head) until the core commits the
 * request's first byte (`tryCommitFirstByte`): a request preempted before that is
 * answered by its cancel with a plain 503 envelope rather than a broken stream. A rebuilt
 * answer commits at its first token: from then on the backend is spending its work on it.
 *
 * A stream that was held has its SSE head out already (held-stream.ts): what the head would
 * have said becomes a comment before the first event, and a body the backend sent instead of
 * a stream becomes an event.
 */
import type {
  IncomingHttpHeaders,
  IncomingMessage,
  OutgoingHttpHeaders,
  ServerResponse,
} from "node:http";
import type { RequestOutcome, Usage } from "../core/events.ts";
import { Errors, type MaitredError } from "../errors.ts";
import type { RequestFlow } from "../runtime/request-flow.ts";
import type { Grant, PendingRequest } from "../runtime/request-table.ts";
import { forwardRequestHeaders, relayResponseHeaders } from "./headers.ts";
import type { HeldStream } from "./held-stream.ts";
import { ENDPOINT_PATHS, type PreparedRequest } from "./prepare-request.ts";
import type { ProxyDeps } from "./proxy-deps.ts";
import { type CompletionRebuilder, createCompletionRebuilder } from "./rebuild-completion.ts";
import { createSseRelay, type SseRelay } from "./sse-relay.ts";
import { callUpstream } from "./upstream-call.ts";
import { classifyFailure, ForwardError } from "./upstream-failure.ts";
import { usageFrom } from "./usage.ts";

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
  flow: RequestFlow,
  pending: PendingRequest,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  requestId: string,
  heldStream: HeldStream | null = null,
): Promise<RequestOutcome> {
  // The head went out while the request was held: only SSE may follow.
  const opened = heldStream?.opened === true ? heldStream : null;
  const upstream = deps.upstreams.get(grant.backendId);
  if (!upstream)
    return Promise.reject(Errors.internal(`Scheduler chose unknown backend ${grant.backendId}`));
  return new Promise<RequestOutcome>((resolve, reject) => {
    let responded = false;
    let ok = false;
    let relay: SseRelay | null = null;
    let rebuilder: CompletionRebuilder | null = null;
    let parts: Buffer[] | null = null;
    let held: { status: number; headers: OutgoingHttpHeaders } | null = null;
    let upstreamStatus = 0;
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
      if (gated && !flow.commit()) {
        refused = true;
        // The cancel effect normally aborted the call already; this covers any other refusal.
        abort(pending.cancelReason ?? Errors.preempted());
        return false;
      }
      if (opened !== null) opened.placed(grant, h.status);
      else {
        outgoing.writeHead(h.status, h.headers);
        if (parts === null) outgoing.flushHeaders();
      }
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

    /** Content seen (streamed or being rebuilt): the first token and progress for the core. */
    const progress = (count: number, previous: number) =>
      flow.tokens(deps.clock.now(), count, previous);
    /** The backend's stream ended, the request not refused: answer with the rebuilt body. */
    const endRebuilt = (r: CompletionRebuilder) => {
      const built = r.finish();
      flow.usage = r.usage;
      if (built === null) {
        const error = Errors.backendIncomplete(grant.backendId);
        reject(new ForwardError({ error, outcome: "upstream_error", kind: "stream" }));
        return;
      }
      const h = held as { status: number; headers: OutgoingHttpHeaders };
      held = null;
      // A stream with no token (an error event, an empty answer) commits here, as a plain body.
      if (r.contentEvents === 0 && gated && !flow.commit()) {
        const reason = pending.cancelReason ?? Errors.preempted();
        reject(new ForwardError(classifyFailure(null, reason, grant.backendId, true)));
        return;
      }
      // An error event in the stream is the backend's error, as a non-2xx status is.
      if (built.status !== 200) deps.metrics.upstreamError("status");
      const body = Buffer.from(built.body);
      h.headers["content-length"] = String(body.length);
      outgoing.writeHead(built.status, h.headers);
      outgoing.end(body);
      resolve(built.status === 200 ? "ok" : "upstream_error");
    };
    const call = callUpstream(
      upstream,
      {
        path: ENDPOINT_PATHS[req.endpoint],
        headers: forwardRequestHeaders(incoming.headers, req.body.length, requestId),
        body: req.body,
      },
      {
        onStart(status: number, upstreamHeaders: IncomingHttpHeaders) {
          responded = true;
          upstreamStatus = status;
          ok = status >= 200 && status < 300;
          const contentType = String(upstreamHeaders["content-type"] ?? "");
          const sse = ok && contentType.includes("text/event-stream");
          const relayed = sse && req.stream;
          const headers = relayResponseHeaders(upstreamHeaders, sse);
          maitredHeaders(headers, req, grant);
          if (!ok) deps.metrics.upstreamError("status");
          // While draining, each response closes its connection so shutdown need not wait
          // for keep-alive timeouts (Node keeps connections alive after server.close()).
          if (deps.isDraining()) outgoing.shouldKeepAlive = false;
          if (sse && req.rebuild !== null) {
            headers["content-type"] = "application/json";
            held = { status, headers };
            rebuilder = createCompletionRebuilder(
              { endpoint: req.endpoint, flavour: deps.responseFlavour, ...req.rebuild },
              {
                onContent(count, previous) {
                  // The first token commits: a request the backend is generating for is
                  // never preempted (refused = cancelled, nothing written).
                  if (previous === 0 && gated && !flow.commit()) {
                    refused = true;
                    abort(pending.cancelReason ?? Errors.preempted());
                    return;
                  }
                  progress(count, previous);
                },
              },
            );
            return;
          }
          if (!relayed) {
            // Written with the body in onEnd: a body that breaks half-way must still be able
            // to become a clean error envelope.
            parts = [];
            held = { status, headers };
            return;
          }
          if (gated)
            held = { status, headers }; // written at the commit, with the first chunk
          else if (opened !== null) opened.placed(grant, status);
          else {
            outgoing.writeHead(status, headers);
            outgoing.flushHeaders();
          }
          relay = createSseRelay(!req.clientWantsUsage, { onContent: progress });
        },
        onData(chunk: Buffer) {
          if (rebuilder !== null) {
            if (!refused) rebuilder.push(chunk);
            return;
          }
          if (parts !== null) {
            parts.push(chunk);
            return;
          }
          if (held !== null && !commitHead()) return;
          if (refused) return;
          const out = relay?.push(chunk) ?? null;
          if (out === null) return;
          if (opened !== null) opened.answered = true;
          // One socket read often carries many events; gather them and write once per tick
          // instead of one syscall per event (measured: the syscall dominates on loopback).
          batch.push(out);
          if (batch.length === 1) process.nextTick(flushBatch);
        },
        onEnd() {
          cleanup();
          if (rebuilder !== null && !refused) {
            endRebuilt(rebuilder);
            return;
          }
          if (refused || (held !== null && !commitHead())) {
            // Cancelled before its first byte: nothing was written, the cancel answers it.
            reject(new ForwardError(classifyFailure(null, abortReason, grant.backendId, true)));
            return;
          }
          if (parts !== null) {
            const body = parts.length === 1 ? parts[0] : Buffer.concat(parts);
            if (ok) flow.usage = usageOfBody(body);
            if (opened !== null) opened.endWithBody(upstreamStatus, body);
            else outgoing.end(body);
          } else {
            const rest = relay?.flush() ?? null;
            if (rest !== null) batch.push(rest);
            flushBatch();
            flow.usage = relay?.usage ?? null;
            outgoing.end();
          }
          resolve(ok ? "ok" : "upstream_error");
        },
        onError(err: Error) {
          cleanup();
          outgoing.off("drain", resume);
          flow.usage = relay?.usage ?? rebuilder?.usage ?? null;
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
