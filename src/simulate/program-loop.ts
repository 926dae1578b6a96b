import type { ProgramRecord, RunRecords } from "../bench/records.ts";
import {
  DEFAULT_MAX_RETRIES,
  FAILURE_BACKOFF_MS,
  isRetryable,
  parseRetryAfter,
  retryDelayMs,
} from "../bench/retry-policy.ts";
import { errorKind } from "../bench/step-client.ts";
import { errorTypeForStatus } from "../errors.ts";
import { createProgramFeed } from "../workload/program-feed.ts";
import { sendsParentLink, subagentPlans } from "../workload/subagents.ts";
import { answerStops, type ProgramPlan, type Workload } from "../workload/types.ts";
import { releasesAtEnd } from "../workload/unreleased.ts";
import { createProgramTokens, type ProgramTokens } from "./program-tokens.ts";
import type { RequestResult, SimRuntime } from "./sim-runtime.ts";

/**
 * The closed loop of `maitred bench` (src/bench/closed-loop.ts) in virtual time: C slots; a
 * slot's next program comes from the workload's feed (src/workload/program-feed.ts: a mix gives
 * each slot one component) and starts at max(its start offset, the moment the slot frees), so
 * the first C ramp up staggered; each sends its steps in order, with its priority class, and
 * waits its tool time between them; when one ends it is released (`program_release`; not
 * when its plan is `unreleased` and it completed) and the slot takes its next program.
 * Records are the bench's, so src/bench/report.ts builds the same report; a step's start is
 * its first attempt and its first token is recorded (TTFT). With `maxPrograms` (a fixed batch,
 * `--programs`) no slot starts a program past the batch's size, and `onAllEnded` is called the
 * instant the batch's last program ends, completed or failed.
 *
 * A rejected or cancelled request (the router answers with an error) is handled as the bench
 * client handles an HTTP error:
 *   1. the error is recorded (`http_<status>_<type>`, the bench's kinds; a preemption is
 *      `http_503_preempted`);
 *   2. what the bench client retries (src/bench/retry-policy.ts: 408, 409, 429, 5xx) is
 *      retried after the same wait (the mean of its jitter, so runs stay reproducible), at most
 *      DEFAULT_MAX_RETRIES times, as the same step with a new request id;
 *   3. any other error, or a retry budget spent, fails the program: it is released and its
 *      slot starts the next program after FAILURE_BACKOFF_MS.
 *
 * Sub-agents (src/workload/subagents.ts): a step whose plan launches some starts them all the
 * instant its answer arrives. They take no slot (they run in their parent's), send their
 * requests with `parentProgramId` unless the workload's link is off, are handled as programs
 * are (retries, release at their end), and are recorded as `records.subagents`, their steps in
 * `records.steps`. The parent's next call waits until the last of them has ended, completed or
 * failed (a harness hands the parent a failed sub-agent's error and goes on), then the step's
 * `toolMs`.
 */

const MS_PER_S = 1000;
/** The mean of the retry jitter: the simulator waits as long as the bench does on average. */
const MEAN_JITTER = 0.5;

export interface ProgramLoopOptions {
  runtime: SimRuntime;
  workload: Workload;
  concurrency: number;
  records: RunRecords;
  maxRetries?: number;
  /** Launch at most this many programs (the bench's `maxPrograms`). */
  maxPrograms?: number;
  /** Called once, when all `maxPrograms` programs have ended. */
  onAllEnded?: () => void;
}

export interface ProgramLoop {
  readonly programsRunning: number;
}

interface Running {
  /** Its slot; a sub-agent runs in its parent's. */
  slot: number;
  plan: ProgramPlan;
  rec: ProgramRecord;
  tokens: ProgramTokens;
  /** A sub-agent: called once when it ends, in place of freeing a slot. */
  onEnd?: () => void;
  /** A sub-agent whose requests name their parent: the parent's id. */
  parentLink?: string;
}

export function startProgramLoop(o: ProgramLoopOptions): ProgramLoop {
  const { runtime, workload, records } = o;
  const kernel = runtime.kernel;
  const maxRetries = o.maxRetries ?? DEFAULT_MAX_RETRIES;
  const feed = createProgramFeed(workload, o.concurrency);
  const link = sendsParentLink(workload);
  let running = 0;
  let ended = 0;

  const startSlot = (slot: number) => {
    if (o.maxPrograms !== undefined && feed.launched >= o.maxPrograms) return;
    const plan = feed.next(slot);
    kernel.schedule(Math.max(kernel.now, plan.startOffsetMs / MS_PER_S), () => launch(slot, plan));
  };

  const launch = (slot: number, plan: ProgramPlan) => {
    const rec: ProgramRecord = {
      programId: plan.programId,
      launchMs: runtime.nowMs(),
      outcome: "unfinished",
    };
    if (plan.priorityClass !== undefined) rec.priorityClass = plan.priorityClass;
    records.programs.push(rec);
    running++;
    send({ slot, plan, rec, tokens: createProgramTokens(plan, workload) }, 0, 0, runtime.nowMs());
  };

  /** Step `i` of `parent` has answered: its sub-agents start now; `then` once all ended. */
  const launchSubagents = (parent: Running, i: number, then: () => void): boolean => {
    const plans = subagentPlans(parent.plan, i);
    if (plans.length === 0) return false;
    let left = plans.length;
    const onEnd = () => {
      if (--left === 0) then();
    };
    records.subagents ??= [];
    const subagents = records.subagents;
    for (const plan of plans) {
      const rec: ProgramRecord = {
        programId: plan.programId,
        launchMs: runtime.nowMs(),
        outcome: "unfinished",
        parentProgramId: parent.rec.programId,
      };
      if (plan.priorityClass !== undefined) rec.priorityClass = plan.priorityClass;
      subagents.push(rec);
      const sub: Running = {
        slot: parent.slot,
        plan,
        rec,
        tokens: createProgramTokens(plan, workload),
        onEnd,
      };
      if (link) sub.parentLink = parent.rec.programId;
      send(sub, 0, 0, runtime.nowMs());
    }
    return true;
  };

  const end = (p: Running, outcome: "completed" | "failed") => {
    p.rec.outcome = outcome;
    p.rec.endMs = runtime.nowMs();
    if (p.onEnd !== undefined) {
      if (releasesAtEnd(p.plan, outcome === "completed")) runtime.release(p.rec.programId);
      p.onEnd();
      return;
    }
    running--;
    ended++;
    if (releasesAtEnd(p.plan, outcome === "completed")) runtime.release(p.rec.programId);
    if (ended === o.maxPrograms) o.onAllEnded?.();
    if (outcome === "completed") startSlot(p.slot);
    else kernel.after(FAILURE_BACKOFF_MS / MS_PER_S, () => startSlot(p.slot));
  };

  /** Attempt `attempt` of step `i`; `startMs` is the step's first attempt. */
  const send = (p: Running, i: number, attempt: number, startMs: number) => {
    const step = p.plan.steps[i];
    const prompt = p.tokens.prompt(i);
    runtime.submit({
      id: attempt === 0 ? `${p.rec.programId}/${i}` : `${p.rec.programId}/${i}.${attempt}`,
      programId: p.rec.programId,
      ...(p.parentLink === undefined ? {} : { parentProgramId: p.parentLink }),
      tokens: prompt.tokens,
      messageChars: prompt.messageChars,
      maxTokens: step.completionTokens,
      priorityClass: p.plan.priorityClass,
      answerStops: answerStops(p.plan, i),
      onDone: (result) => done(p, i, attempt, startMs, result),
    });
  };

  const done = (p: Running, i: number, attempt: number, startMs: number, r: RequestResult) => {
    const nowMs = runtime.nowMs();
    if (!r.ok) {
      const status = r.error.status;
      const kind = errorKind(
        status,
        { error: { type: errorTypeForStatus(status) } },
        (name) => r.error.headers[name],
      );
      records.errors.push({ programId: p.rec.programId, stepIndex: i, atMs: nowMs, kind });
      if (isRetryable(status) && attempt < maxRetries) {
        const waitMs = retryDelayMs(
          attempt,
          parseRetryAfter(r.error.headers["retry-after"]),
          MEAN_JITTER,
        );
        kernel.after(waitMs / MS_PER_S, () => send(p, i, attempt + 1, startMs));
      } else end(p, "failed");
      return;
    }
    records.steps.push({
      programId: p.rec.programId,
      stepIndex: i,
      startMs,
      endMs: nowMs,
      promptTokens: r.promptTokens,
      cachedTokens: r.cachedTokens,
      completionTokens: r.completionTokens,
      pausedMs: r.pausedMs,
      ...(r.firstTokenMs === undefined ? {} : { firstTokenMs: r.firstTokenMs }),
    });
    if (i === 0) p.rec.firstResponseMs = nowMs;
    const steps = p.plan.steps;
    if (i === steps.length - 1) {
      end(p, "completed");
      return;
    }
    p.tokens.recordOutput(i, r.outputIds);
    const next = () =>
      kernel.after(steps[i].toolMs / MS_PER_S, () => send(p, i + 1, 0, runtime.nowMs()));
    if (!launchSubagents(p, i, next)) next();
  };

  for (let k = 0; k < o.concurrency; k++) startSlot(k);
  return {
    get programsRunning() {
      return running;
    },
  };
}
