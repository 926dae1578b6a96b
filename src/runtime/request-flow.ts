/**
 * One dispatched request's conversation with the scheduler core, the same for the HTTP proxy
 * and for the simulator, so the core sees a request the same way from either: the first-byte
 * commit, the first token, progress as the token count grows, and the end (usage when the
 * engine reported it, then `request_finished`) exactly once, whichever way the request ended.
 */
import { progressDue } from "../core/api.ts";
import type { RequestOutcome, SchedulerEvent, Usage } from "../core/events.ts";

/** The part of the run loop a request talks to. */
export interface FlowLoop {
  send(event: SchedulerEvent): void;
  tryCommitFirstByte(requestId: string): boolean;
}

export interface RequestFlow {
  readonly requestId: string;
  /**
   * Right before the first byte of the answer is delivered: false = the request was cancelled
   * (preempted) and nothing may be delivered; its cancel answers it.
   */
  commit(): boolean;
  /**
   * The answer's content grew from `previous` to `count` (streamed events, one per engine step):
   * the first token, then progress each time the count crosses the progress interval.
   */
  tokens(now: number, count: number, previous: number): void;
  /** The engine's usage, reported when the request ends. */
  usage: Usage | null;
  /** The answer ended with `finish_reason: "stop"` and no tool call (reported with an ok end). */
  stopped: boolean;
  readonly firstTokenAt: number | null;
  readonly lastTokenAt: number | null;
  /**
   * Ends the request: usage (when known), then `request_finished`; later calls do nothing.
   * `retrying`: the same request is about to be tried on another backend.
   */
  finish(now: number, outcome: RequestOutcome, retrying?: boolean): void;
}

export function createRequestFlow(
  loop: FlowLoop,
  requestId: string,
  progressIntervalTokens: number,
): RequestFlow {
  let ended = false;
  const flow: RequestFlow = {
    requestId,
    usage: null,
    stopped: false,
    firstTokenAt: null,
    lastTokenAt: null,
    commit: () => loop.tryCommitFirstByte(requestId),
    tokens(now, count, previous) {
      const f = flow as { firstTokenAt: number | null; lastTokenAt: number | null };
      f.lastTokenAt = now;
      if (previous === 0 && count > 0) {
        f.firstTokenAt = now;
        loop.send({ kind: "request_first_token", now, requestId });
      }
      if (progressDue(previous, count, progressIntervalTokens))
        loop.send({ kind: "request_progress", now, requestId, completionTokens: count });
    },
    finish(now, outcome, retrying = false) {
      if (ended) return;
      ended = true;
      if (flow.usage !== null)
        loop.send({ kind: "request_usage", now, requestId, usage: flow.usage });
      loop.send({
        kind: "request_finished",
        now,
        requestId,
        outcome,
        ...(retrying ? { retrying } : {}),
        ...(flow.stopped && outcome === "ok" ? { answerStopped: true } : {}),
      });
    },
  };
  return flow;
}
