/**
 * A streaming request the core holds (parks) is answered at once: the 200 and the SSE head go
 * out as soon as it is parked, then a comment with its place in the queue at least every
 * HOLD_KEEPALIVE_MS, so that a client, proxy or load balancer that gives up on a silent
 * connection never cuts a request that is only waiting for room. SSE clients skip comments
 * (lines that start with `:`), the official OpenAI SDKs included.
 *
 * Once the head is out, everything that follows is written as SSE: the headers a relayed
 * answer would carry once a backend is chosen (`x-maitred-backend`, `x-maitred-paused-ms`, the
 * backend's status when it is not 200) become a comment right before the first event; an error
 * (the hold ended in one, or the backend answered with one) becomes the error event of the
 * request's dialect: for chat and completions one in the OpenAI envelope followed by
 * `data: [DONE]`, as vLLM ends a stream that failed, a backend's error in another shape moved
 * into the envelope (backend-error.ts), or a client would read it as a chunk. Such an error
 * comes inside a 200: the OpenAI SDKs raise it but, having no status to go by, do not retry it
 * as they retry a 503 with Retry-After. The dialect also says what follows each comment (the
 * Messages API's `ping` event).
 *
 * Only requests that are held pay for this: one object and one timer each; a request
 * dispatched at once never creates one.
 */
import type { ServerResponse } from "node:http";
import type { HoldView } from "../core/api.ts";
import type { MaitredError } from "../errors.ts";
import type { Grant } from "../runtime/request-table.ts";
import type { Dialect } from "./dialects/dialect.ts";
import type { ProxyDeps } from "./proxy-deps.ts";

/**
 * A comment at least this often while a stream is held. The official OpenAI SDKs give up on a
 * request that has sent nothing for 600 s, and proxies and load balancers cut an idle
 * connection much sooner (60 s is a common default); a few bytes every 15 s stay well inside
 * all of them.
 */
export const HOLD_KEEPALIVE_MS = 15_000;

export interface HeldStream {
  /** The SSE head went out: from now on every answer to the client is written as SSE. */
  readonly opened: boolean;
  /** An event (not a comment) went out: from now on the request is not tried elsewhere. */
  answered: boolean;
  /** The core parked `requestId`: open the stream (once) and keep it alive until `release`. */
  hold(requestId: string): void;
  /** The hold ended (dispatched, refused, or the client left): no more comments. */
  release(): void;
  /** Where it runs, as a comment before the first event (what a relayed head would say). */
  placed(grant: Grant, status: number): void;
  /**
   * A body the backend sent instead of a stream (its error, moved into the envelope) as one
   * event, then `[DONE]`.
   */
  endWithBody(status: number, body: Buffer): void;
  /** The request ended in maitred's error before any event: the error event, then `[DONE]`. */
  fail(error: MaitredError): void;
}

export function createHeldStream(
  deps: Pick<ProxyDeps, "clock" | "loop" | "isStopping" | "logger">,
  outgoing: ServerResponse,
  programId: string | null,
  dialect: Dialect,
): HeldStream {
  const ping = dialect.keepAlive;
  let requestId: string | null = null;
  let timer: { cancel(): void } | null = null;

  /** One comment line; skipped while the client is not reading (the next one will do). */
  const comment = (text: string, after = "") => {
    if (!outgoing.destroyed && !outgoing.writableEnded && !outgoing.writableNeedDrain)
      outgoing.write(`: maitred ${text}\n\n${after}`);
  };
  let warned = false;
  /**
   * Where the request stands, or null. The core is asked here from the keep-alive timer, outside
   * the run loop that catches (and counts) what the core throws on an event, so a throw is
   * caught here: out of a timer it would end the process. The comment then says only `held`,
   * which keeps the connection alive all the same, and the timer goes on.
   */
  const view = (id: string): HoldView | null => {
    try {
      return deps.loop.scheduler.holdOf({ requestId: id });
    } catch (err) {
      if (!warned) {
        warned = true;
        deps.logger.warn("could not read where a held request stands", { requestId: id, err });
      }
      return null;
    }
  };
  const beat = () => {
    timer = null;
    if (requestId === null || outgoing.destroyed) return;
    const v = view(requestId);
    // Waited by the runtime's clock: the core's time is that of its last event.
    const waited = v === null ? 0 : Math.round(deps.clock.now() - v.parkedAt);
    comment(v === null ? "held" : `held position=${v.position} waited_ms=${waited}`, ping);
    timer = deps.clock.setTimeout(beat, HOLD_KEEPALIVE_MS);
  };

  const stream: HeldStream = {
    opened: false,
    answered: false,
    hold(id) {
      if (outgoing.destroyed) return;
      requestId = id;
      if (!stream.opened) {
        (stream as { opened: boolean }).opened = true;
        if (deps.isStopping()) outgoing.shouldKeepAlive = false;
        outgoing.writeHead(200, {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache",
          // Asks a buffering reverse proxy (nginx) to pass each comment on as it comes.
          "x-accel-buffering": "no",
          "x-maitred-held": "true",
          ...(programId === null ? {} : { "x-maitred-program": encodeURIComponent(programId) }),
        });
      }
      timer?.cancel();
      beat();
    },
    release() {
      requestId = null;
      timer?.cancel();
      timer = null;
    },
    placed(grant, status) {
      const paused = Math.round(grant.pausedMs);
      comment(
        `backend=${grant.backendId} paused_ms=${paused}${status === 200 ? "" : ` status=${status}`}`,
      );
    },
    endWithBody(status, body) {
      if (!outgoing.writableEnded) outgoing.end(dialect.bodyEvent(status, body));
    },
    fail(error) {
      const retry = error.headers["retry-after"];
      comment(`status=${error.status}${retry === undefined ? "" : ` retry_after=${retry}`}`);
      if (!outgoing.writableEnded) outgoing.end(dialect.errorEvent(error));
    },
  };
  return stream;
}

/**
 * Whether the client got any of its answer: an event, on a held stream (its head and comments
 * tell it nothing a retry elsewhere would contradict); any byte, otherwise.
 */
export function answered(held: HeldStream | null, outgoing: ServerResponse): boolean {
  return held?.opened === true ? held.answered : outgoing.headersSent;
}
