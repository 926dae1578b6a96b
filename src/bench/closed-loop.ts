import { setMaxListeners } from "node:events";
import { type Clock, wallClock } from "../runtime/clock.ts";
import { conversationOptionsFor, createConversation } from "../workload/conversation.ts";
import { createProgramFeed } from "../workload/program-feed.ts";
import { sendsParentLink, subagentPlans } from "../workload/subagents.ts";
import { answerStops, type ProgramPlan, type Workload } from "../workload/types.ts";
import { releasesAtEnd } from "../workload/unreleased.ts";
import type { ProgramRecord, RunRecords } from "./records.ts";
import {
  DEFAULT_MAX_RETRIES,
  FAILURE_BACKOFF_MS,
  isRetryable,
  retryDelayMs,
} from "./retry-policy.ts";
import type { StepClient, StepResponse } from "./step-client.ts";

/**
 * The closed-loop agent driver: C programs in flight; when one ends the slot's next program
 * takes its place (ThunderAgent's "parallel workflow number"; a mixed
 * workload keeps each slot on one component: src/workload/program-feed.ts). A program sends its steps in order, each the conversation so far, and waits its
 * tool time (divided by `timeScale`) between them. The run ends when the steady window closes
 * (in-flight calls are aborted, their programs count as unfinished) or when `maxPrograms`
 * programs have ended, whichever is first. Time comes from an injected clock (the wall clock
 * by default), so tests run the loop on a manual or virtual clock without waiting.
 *
 * Sub-agents (src/workload/subagents.ts): a step whose plan launches some starts them all when
 * its answer arrives, in the parent's slot (they take none), each sending its requests with
 * header `x-parent-program-id` unless the workload's link is off, streaming as its parent does,
 * and released when it ends; the parent waits until the last has ended, completed or failed,
 * then its tool time. They are recorded in `records.subagents`, their steps in `records.steps`.
 */

/** Period of the do-nothing timer that keeps the process alive during a run (any will do). */
const KEEP_ALIVE_MS = 60_000;

export interface LoopProgress {
  elapsedMs: number;
  stepsCompleted: number;
  programsStarted: number;
  programsCompleted: number;
  programsRunning: number;
  errors: number;
}

export interface ClosedLoopOptions {
  workload: Workload;
  client: StepClient;
  model: string;
  concurrency: number;
  /** Tool times and start offsets are divided by this. */
  timeScale?: number;
  warmupMs?: number;
  /** Steady-window length; the run stops at warmup + duration. */
  durationMs?: number;
  /** Launch at most this many programs; the run ends when they have all ended. */
  maxPrograms?: number;
  /** Prefix for program ids, so runs against one long-lived router never collide. */
  programIdPrefix?: string;
  /** Retries of a failed step before its program fails (retry-policy.ts). */
  maxRetries?: number;
  /** The retry jitter's random source (default Math.random). */
  random?: () => number;
  /**
   * Share of programs whose requests stream (0..1, default 1); the others send plain JSON
   * requests, as most agent harnesses do. Which programs stream is fixed by their launch order.
   */
  streamShare?: number;
  /** Where the loop reads time and waits (default: the wall clock). */
  clock?: Clock;
}

/**
 * Whether the `index`-th program launched streams: spread evenly over launch order (golden
 * ratio steps), so any run prefix keeps about `share` of its programs streaming.
 */
export function streamsAt(index: number, share: number): boolean {
  if (share >= 1) return true;
  if (share <= 0) return false;
  return (index * 0.6180339887498949) % 1 < share;
}

export interface ClosedLoop {
  done: Promise<RunRecords>;
  stop(): void;
  progress(): LoopProgress;
}

/** Wait `ms` on `clock`; resolves early (never rejects) when the signal aborts. */
export function abortableSleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    const done = () => {
      timer.cancel();
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = clock.setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

export function startClosedLoop(o: ClosedLoopOptions): ClosedLoop {
  const clock = o.clock ?? wallClock;
  const sleep = (ms: number, signal: AbortSignal) => abortableSleep(clock, ms, signal);
  const scale = o.timeScale ?? 1;
  const maxRetries = o.maxRetries ?? DEFAULT_MAX_RETRIES;
  const random = o.random ?? Math.random;
  const prefix = o.programIdPrefix ?? "";
  const t0 = clock.now();
  const elapsed = () => clock.now() - t0;
  const stopper = new AbortController();
  // Every in-flight request and sleep listens on this one signal.
  setMaxListeners(0, stopper.signal);
  const signal = stopper.signal;
  const records: RunRecords = { steps: [], errors: [], programs: [], endMs: 0 };
  const counts = { steps: 0, completed: 0, running: 0 };
  const feed = createProgramFeed(o.workload, o.concurrency);
  const link = sendsParentLink(o.workload);
  let stopAt: number | null = null;
  let launched = 0;
  const stop = () => {
    if (stopAt === null) stopAt = elapsed();
    stopper.abort();
  };

  /** The step's response (retried as retry-policy.ts says) and its first token's time. */
  async function send(
    rec: ProgramRecord,
    stepIndex: number,
    request: Parameters<StepClient["send"]>[0],
  ): Promise<{ res: StepResponse; firstTokenMs: number | undefined } | null> {
    for (let attempt = 0; ; attempt++) {
      let res: StepResponse;
      let firstTokenMs: number | undefined;
      try {
        res = await o.client.send(
          {
            ...request,
            onFirstToken: () => {
              firstTokenMs ??= elapsed();
            },
          },
          signal,
        );
      } catch (err) {
        if (signal.aborted) return null;
        throw err;
      }
      if (res.ok || signal.aborted) return signal.aborted ? null : { res, firstTokenMs };
      records.errors.push({ programId: rec.programId, stepIndex, atMs: elapsed(), kind: res.kind });
      if (!isRetryable(res.status) || attempt >= maxRetries) return { res, firstTokenMs };
      await sleep(retryDelayMs(attempt, res.retryAfterMs, random()) / scale, signal);
      if (signal.aborted) return null;
    }
  }

  /** A program of a slot, or (with `parent`) a sub-agent of the program `parent`. */
  async function runProgram(
    plan: ProgramPlan,
    parent?: { rec: ProgramRecord; streams: boolean },
  ): Promise<void> {
    const rec: ProgramRecord = {
      programId: prefix + plan.programId,
      launchMs: elapsed(),
      outcome: "unfinished",
    };
    if (plan.priorityClass !== undefined) rec.priorityClass = plan.priorityClass;
    if (parent === undefined) {
      records.programs.push(rec);
      counts.running++;
    } else {
      rec.parentProgramId = parent.rec.programId;
      records.subagents ??= [];
      records.subagents.push(rec);
    }
    const parentLink = parent !== undefined && link ? parent.rec.programId : undefined;
    const conversation = createConversation(plan, conversationOptionsFor(o.workload, plan));
    const streams = parent?.streams ?? streamsAt(launched++, o.streamShare ?? 1);
    const texts: (string | undefined)[] = [];
    try {
      for (let i = 0; i < plan.steps.length; i++) {
        const step = plan.steps[i];
        const startMs = elapsed();
        const sent = await send(rec, i, {
          stream: streams,
          programId: rec.programId,
          ...(parentLink === undefined ? {} : { parentProgramId: parentLink }),
          model: o.model,
          messages: conversation.messagesFor(i, texts),
          maxTokens: step.completionTokens,
          ...(plan.priorityClass === undefined ? {} : { priorityClass: plan.priorityClass }),
          ...(answerStops(plan, i) ? { answerStops: true } : {}),
        });
        if (sent === null) return;
        const res = sent.res;
        if (!res.ok) {
          rec.outcome = "failed";
          rec.endMs = elapsed();
          // The back-off is the slot's; a failed sub-agent's parent goes on at once.
          if (parent === undefined) await sleep(FAILURE_BACKOFF_MS, signal);
          return;
        }
        const endMs = elapsed();
        records.steps.push({
          programId: rec.programId,
          stepIndex: i,
          startMs,
          endMs,
          promptTokens: res.promptTokens,
          cachedTokens: res.cachedTokens,
          completionTokens: res.completionTokens,
          pausedMs: res.pausedMs,
          ...(sent.firstTokenMs === undefined ? {} : { firstTokenMs: sent.firstTokenMs }),
        });
        counts.steps++;
        if (i === 0) rec.firstResponseMs = endMs;
        texts[i] = res.text;
        if (i < plan.steps.length - 1) {
          const subagents = subagentPlans(plan, i);
          if (subagents.length > 0) {
            await Promise.all(subagents.map((sub) => runProgram(sub, { rec, streams })));
            if (signal.aborted) return;
          }
          await sleep(step.toolMs / scale, signal);
          if (signal.aborted) return;
        }
      }
      rec.outcome = "completed";
      rec.endMs = elapsed();
      if (parent === undefined) counts.completed++;
    } finally {
      if (parent === undefined) counts.running--;
      if (releasesAtEnd(plan, rec.outcome === "completed")) await o.client.release(rec.programId);
    }
  }

  /** Slot `slot` of the loop: its programs come from the feed (a mix keeps one component). */
  async function worker(slot: number): Promise<void> {
    while (!signal.aborted) {
      if (o.maxPrograms !== undefined && feed.launched >= o.maxPrograms) return;
      const plan = feed.next(slot);
      const wait = plan.startOffsetMs / scale - elapsed();
      if (wait > 0) await sleep(wait, signal);
      if (signal.aborted) return;
      await runProgram(plan);
    }
  }

  const windowEnd = o.durationMs === undefined ? null : (o.warmupMs ?? 0) + o.durationMs;
  if (windowEnd !== null) {
    void sleep(windowEnd - elapsed(), signal).then(() => {
      if (!signal.aborted) stop();
    });
  }
  // Wall-clock timers do not keep the process alive, nor do idle keep-alive sockets: while
  // every program waits out its tool time nothing else might, so the run holds the process
  // open itself until it ends.
  const keepAlive = setInterval(() => {}, KEEP_ALIVE_MS);
  const workers = Array.from({ length: o.concurrency }, (_, slot) => worker(slot));
  const done = Promise.all(workers)
    .then(() => {
      records.endMs = stopAt ?? elapsed();
      stopper.abort();
      return records;
    })
    .finally(() => clearInterval(keepAlive));
  return {
    done,
    stop,
    progress: () => ({
      elapsedMs: elapsed(),
      stepsCompleted: counts.steps,
      programsStarted: records.programs.length,
      programsCompleted: counts.completed,
      programsRunning: counts.running,
      errors: records.errors.length,
    }),
  };
}
