/**
 * The driver side of `npm run bench:cells`: a step client that keeps every attempt with its
 * times and outcome (so the run can be matched to HAProxy's log), decides which programs stream
 * by the program rather than by launch order, and drains the requests in flight at the end; and
 * the workload a lone router runs to stand in for one cell.
 */
import { setMaxListeners } from "node:events";
import { type Clock, wallClock } from "../runtime/clock.ts";
import type { Workload } from "../workload/types.ts";
import type { StepClient } from "./step-client.ts";

/** The index `i` of program id `…p<i>` (its workload position, which seeds everything). */
export function programIndex(id: string): number {
  const m = /p(\d+)$/.exec(id);
  return m === null ? 0 : Number(m[1]);
}

/** One request the driver sent, as it went. */
export interface Attempt {
  programId: string;
  startMs: number;
  endMs: number | null;
  stream: boolean;
  firstTokenMs: number | null;
  /** `hung`: still unanswered `drainMs` after the run ended. */
  outcome: "pending" | "ok" | "failed" | "hung";
  kind: string | null;
  /** How long the router held it before forwarding (`x-maitred-paused-ms`), when answered. */
  pausedMs: number | null;
  /** Answered after the run had ended (during the drain). */
  afterStop: boolean;
}

/**
 * Wraps the step client so that (1) whether a program streams is `streams(programId)`, fixed
 * by the program (its workload index in `bench:cells`), not by the order a driver happened to
 * launch it in, so a lone router sees the same programs stream as its cell did; (2) every
 * attempt is kept with its times on `clock`; (3) when the run ends, requests in flight get
 * `drainMs` to be answered before they are cut and counted as hung (the closed loop cuts them
 * at once, which would hide a request that never ends).
 */
export function traceClient(
  inner: StepClient,
  drainMs: number,
  streams: (programId: string) => boolean,
  clock: Clock = wallClock,
) {
  const attempts: Attempt[] = [];
  const hard = new AbortController();
  setMaxListeners(0, hard.signal);
  let draining = false;
  const startDrain = () => {
    if (draining) return;
    draining = true;
    if (drainMs <= 0) hard.abort();
    else setTimeout(() => hard.abort(), drainMs).unref();
  };
  const client: StepClient = {
    async send(req, signal) {
      const stream = streams(req.programId);
      const at: Attempt = {
        programId: req.programId,
        startMs: clock.now(),
        endMs: null,
        stream,
        firstTokenMs: null,
        outcome: "pending",
        kind: null,
        pausedMs: null,
        afterStop: false,
      };
      attempts.push(at);
      if (signal.aborted) startDrain();
      signal.addEventListener("abort", startDrain, { once: true });
      try {
        const res = await inner.send(
          {
            ...req,
            stream,
            onFirstToken: () => {
              at.firstTokenMs ??= clock.now();
              req.onFirstToken?.();
            },
          },
          hard.signal,
        );
        at.endMs = clock.now();
        at.afterStop = signal.aborted;
        at.outcome = res.ok ? "ok" : "failed";
        if (res.ok) at.pausedMs = res.pausedMs;
        else at.kind = res.kind;
        return res;
      } catch (err) {
        if (hard.signal.aborted) at.outcome = "hung";
        throw err;
      } finally {
        signal.removeEventListener("abort", startDrain);
      }
    },
    release: (id) => inner.release(id),
    close: () => inner.close(),
  };
  return { client, attempts };
}

/** The programs of `base` at `indices`, in that order, under their own ids and seeds. */
export function subsequence(base: Workload, indices: readonly number[], cell: string): Workload {
  return {
    name: base.name,
    seed: base.seed,
    sharedPrefixTokens: base.sharedPrefixTokens,
    size: base.size,
    ...(base.unreleased === undefined ? {} : { unreleased: base.unreleased }),
    programAt(k) {
      if (k >= indices.length) {
        throw new Error(`${cell}: ran out of probed program ids (${indices.length})`);
      }
      return base.programAt(indices[k]);
    },
  };
}
