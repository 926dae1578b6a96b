/**
 * One forward's state: the backend call, the client's response, the head waiting for the
 * core's commit, and how the forward settles. The answer its backend's head chose (forward.ts)
 * writes through it; the upstream call's callbacks land here first.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { RequestOutcome, Usage } from "../../core/events.ts";
import { Errors, type MaitredError } from "../../errors.ts";
import type { RequestFlow } from "../../runtime/request-flow.ts";
import type { Grant, PendingRequest } from "../../runtime/request-table.ts";
import { relayResponseHeaders } from "../headers.ts";
import type { HeldStream } from "../held-stream.ts";
import type { PreparedRequest } from "../prepare-request.ts";
import type { ProxyDeps } from "../proxy-deps.ts";
import type { UpstreamCall, UpstreamSink } from "../upstream-call.ts";
import { classifyFailure, type Failure, ForwardError } from "../upstream-failure.ts";

/** How the backend's body reaches the client, chosen from its head. */
export interface Answer {
  /** A chunk of the backend's body. */
  data(chunk: Buffer): void;
  /** The backend's body ended: answer the client and settle the forward. */
  end(): void;
  /** The usage read so far, for a try that fails part way. */
  readonly usage: Usage | null;
}

/** A head not written yet: it waits for the first byte's commit, or for the whole body. */
export interface Head {
  status: number;
  headers: OutgoingHttpHeaders;
}

/** Chooses the answer from the backend's head (its status, headers and whether it streams). */
export type PickAnswer = (trip: Trip, head: Head, sse: boolean) => Answer;

/** One forward's state, shared by the answer its backend's head chose. */
export class Trip implements UpstreamSink {
  /** The head went out while the request was held: only SSE may follow. */
  readonly opened: HeldStream | null;
  /**
   * Priorities on: a request may be preempted until its first byte is committed (one that has
   * started answering never is), so its head and first bytes wait for the core's commit.
   */
  readonly gated: boolean;
  /** The backend's status; 0 until its head came. */
  status = 0;
  ok = false;
  /** The core refused the commit: the request was cancelled and nothing may be written. */
  refused = false;
  /** Set by `forward` before the call starts. */
  resolve!: (outcome: RequestOutcome) => void;
  reject!: (err: ForwardError) => void;
  /**
   * Set once `callUpstream` returns. undici may report an error from within that call, before:
   * `onError` does not use it, and nothing else can run until the call is made.
   */
  call!: UpstreamCall;
  head: Head | null = null;
  private answer: Answer | null = null;
  private abortReason: MaitredError | null = null;

  readonly deps: ProxyDeps;
  readonly req: PreparedRequest;
  readonly grant: Grant;
  readonly flow: RequestFlow;
  readonly pending: PendingRequest;
  readonly outgoing: ServerResponse;
  private readonly pick: PickAnswer;

  constructor(
    deps: ProxyDeps,
    req: PreparedRequest,
    grant: Grant,
    flow: RequestFlow,
    pending: PendingRequest,
    outgoing: ServerResponse,
    held: HeldStream | null,
    pick: PickAnswer,
  ) {
    this.deps = deps;
    this.req = req;
    this.grant = grant;
    this.flow = flow;
    this.pending = pending;
    this.outgoing = outgoing;
    this.pick = pick;
    this.opened = held?.opened === true ? held : null;
    this.gated = deps.priority !== null;
  }

  /** Stop the call; the reason (client gone, core cancel) is what the client is told. */
  readonly abort = (reason: MaitredError): void => {
    this.abortReason ??= reason;
    this.call.abort(reason);
  };

  readonly onClientClose = (): void => {
    if (!this.outgoing.writableFinished) this.abort(Errors.clientClosed());
  };

  readonly resumeCall = (): void => this.call.resume();

  /** The client is not reading: stop reading the backend until it drains. */
  waitForDrain(): void {
    this.call.pause();
    this.outgoing.once("drain", this.resumeCall);
  }

  /** Content seen (streamed or being rebuilt): the first token and progress for the core. */
  progress(count: number, previous: number): void {
    this.flow.tokens(this.deps.clock.now(), count, previous);
  }

  /** The core's commit of the first byte when gated; false = cancelled, write nothing. */
  commit(): boolean {
    if (!this.gated || this.flow.commit()) return true;
    this.refused = true;
    // The cancel effect normally aborted the call already; this covers any other refusal.
    this.abort(this.pending.cancelReason ?? Errors.preempted());
    return false;
  }

  /** Write the held head, after the commit when gated; false = cancelled, nothing written. */
  commitHead(flush: boolean): boolean {
    const h = this.head as Head;
    this.head = null;
    if (!this.commit()) return false;
    this.writeHead(h, flush);
    return true;
  }

  /** The head, or on a held stream the comment that says what it would have. */
  writeHead(h: Head, flush: boolean): void {
    if (this.opened !== null) this.opened.placed(this.grant, h.status);
    else {
      this.outgoing.writeHead(h.status, h.headers);
      if (flush) this.outgoing.flushHeaders();
    }
  }

  /** The answer was a Responses response with this id: its backend is where it is stored. */
  stored(responseId: string | null | undefined): void {
    if (responseId == null) return;
    const { req } = this;
    this.deps.responseHomes?.record(responseId, {
      backendId: this.grant.backendId,
      programKey: req.programKey,
      programId: req.identity.programId,
      owner: req.tenant,
    });
  }

  /** Cancelled before its first byte: nothing was written, and the cancel answers it. */
  cancelled(): void {
    this.fail(classifyFailure(null, this.abortReason, this.grant.backendId, true));
  }

  fail(failure: Failure): void {
    this.reject(new ForwardError(failure));
  }

  onStart(status: number, upstreamHeaders: IncomingHttpHeaders): void {
    this.status = status;
    this.ok = status >= 200 && status < 300;
    const sse =
      this.ok && String(upstreamHeaders["content-type"] ?? "").includes("text/event-stream");
    const headers = relayResponseHeaders(upstreamHeaders, sse);
    const { req, grant } = this;
    if (req.identity.programId !== null)
      headers["x-maitred-program"] = encodeURIComponent(req.identity.programId);
    headers["x-maitred-backend"] = grant.backendId;
    headers["x-maitred-paused-ms"] = String(Math.round(grant.pausedMs));
    if (!this.ok) this.deps.metrics.upstreamError("status");
    // While draining, each response closes its connection so shutdown need not wait for
    // keep-alive timeouts (Node keeps connections alive after server.close()).
    if (this.deps.isStopping()) this.outgoing.shouldKeepAlive = false;
    this.answer = this.pick(this, { status, headers }, sse);
  }

  onData(chunk: Buffer): void {
    this.answer?.data(chunk);
  }

  onEnd(): void {
    this.stopListening();
    if (this.answer !== null) this.answer.end();
    // undici ends a response only after its head, so this is not expected; should it happen,
    // it is the backend's broken answer, neither a connection to retry nor an empty 200.
    else
      this.fail({
        error: Errors.backendIncomplete(this.grant.backendId),
        outcome: "upstream_error",
        kind: "stream",
      });
  }

  onError(err: Error): void {
    this.stopListening();
    this.outgoing.off("drain", this.resumeCall);
    this.flow.usage = this.answer?.usage ?? null;
    // Whatever undici threw because of our abort, the abort's reason is the real story.
    this.fail(classifyFailure(err, this.abortReason, this.grant.backendId, this.status !== 0));
  }

  private stopListening(): void {
    this.pending.onCancel = null;
    this.outgoing.off("close", this.onClientClose);
  }
}
