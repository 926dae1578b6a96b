import assert from "node:assert/strict";
import { test } from "node:test";
import type { RunRecords } from "../../src/bench/records.ts";
import { FAILURE_BACKOFF_MS } from "../../src/bench/retry-policy.ts";
import type { Scheduler } from "../../src/core/api.ts";
import { createEventKernel } from "../../src/engine/virtual-driver.ts";
import { Errors, type MaitredError } from "../../src/errors.ts";
import type { RunLoop } from "../../src/runtime/run-loop.ts";
import { startProgramLoop } from "../../src/simulate/program-loop.ts";
import type { SimRequest, SimRuntime } from "../../src/simulate/sim-runtime.ts";
import { scaleToolTimes } from "../../src/workload/tool-time-scale.ts";
import type { ProgramPlan, Workload } from "../../src/workload/types.ts";

/** Two-step programs with a 2 s tool gap; every response takes 1 s of virtual time. */
const workload: Workload = {
  name: "fixed",
  seed: 1,
  sharedPrefixTokens: 10,
  size: Number.POSITIVE_INFINITY,
  programAt: (index): ProgramPlan => ({
    programId: `p${index}`,
    index,
    source: "test",
    startOffsetMs: index * 100,
    steps: [
      { promptTokens: 40, completionTokens: 5, toolMs: 2000 },
      { promptTokens: 60, completionTokens: 5, toolMs: 0 },
    ],
  }),
};

/** A runtime whose answers are scripted: `decide` returns an error to reject with, or null. */
function fakeRuntime(decide: (r: SimRequest) => MaitredError | null) {
  const kernel = createEventKernel();
  const sent: { id: string; at: number; priorityClass?: string }[] = [];
  const released: string[] = [];
  const runtime: SimRuntime = {
    kernel,
    scheduler: {} as Scheduler,
    loop: {} as RunLoop,
    backends: [],
    nowMs: () => kernel.now * 1000,
    submit(r) {
      sent.push({ id: r.id, at: kernel.now, priorityClass: r.priorityClass });
      const error = decide(r);
      const firstTokenMs = kernel.now * 1000 + 100; // first token 100 ms after the request
      kernel.after(error ? 0 : 1, () =>
        r.onDone(
          error
            ? { ok: false, error }
            : {
                ok: true,
                promptTokens: r.tokens.length,
                cachedTokens: 0,
                completionTokens: r.maxTokens,
                outputIds: Array(r.maxTokens).fill(20),
                pausedMs: 0,
                firstTokenMs,
              },
        ),
      );
    },
    release: (id) => released.push(id),
    tick: () => ({}),
    deadlineTick: () => {},
    liveRequests: 0,
    waitingByClass: () => ({}),
  };
  return { kernel, runtime, sent, released };
}

const newRecords = (): RunRecords => ({ steps: [], errors: [], programs: [], endMs: 0 });

test("closed loop: a finished program is released and the next one takes its slot", () => {
  const { kernel, runtime, released } = fakeRuntime(() => null);
  const records = newRecords();
  startProgramLoop({ runtime, workload, concurrency: 2, records });
  kernel.run(4.5);
  // p0 and p1 each take 1 + 2 + 1 s; p2 and p3 start when they end.
  assert.deepEqual(released, ["p0", "p1"]);
  assert.deepEqual(
    records.programs.map((p) => [p.programId, p.launchMs, p.outcome]),
    [
      ["p0", 0, "completed"],
      ["p1", 100, "completed"],
      ["p2", 4000, "unfinished"],
      ["p3", 4100, "unfinished"],
    ],
  );
  assert.equal(records.steps.length, 4);
  const p0s1 = records.steps.find((s) => s.programId === "p0" && s.stepIndex === 1);
  assert.equal(p0s1?.startMs, 3000, "step 1 of p0 waits its 2 s tool time");
});

test("--tool-time-scale: the loop waits the scaled tool time between two steps", () => {
  const { kernel, runtime } = fakeRuntime(() => null);
  const records = newRecords();
  startProgramLoop({ runtime, workload: scaleToolTimes(workload, 3), concurrency: 1, records });
  kernel.run(10);
  const step1 = records.steps.find((s) => s.programId === "p0" && s.stepIndex === 1);
  assert.equal(step1?.startMs, 1000 + 3 * 2000, "step 0 takes 1 s, then 3 × the 2 s tool time");
});

test("a 503 is retried after its Retry-After with a new request id, and counted as an error", () => {
  let rejected = 0;
  const { kernel, runtime, sent } = fakeRuntime(() =>
    rejected++ < 2 ? Errors.noHealthyBackend(3) : null,
  );
  const records = newRecords();
  startProgramLoop({ runtime, workload, concurrency: 1, records });
  kernel.run(10);
  assert.deepEqual(
    sent.slice(0, 3).map((s) => [s.id, s.at]),
    [
      ["p0/0", 0],
      ["p0/0.1", 3],
      ["p0/0.2", 6],
    ],
  );
  assert.deepEqual(
    records.errors.map((e) => e.kind),
    ["http_503_ServiceUnavailableError", "http_503_ServiceUnavailableError"],
  );
  assert.equal(records.programs[0].outcome, "completed", "the program carries on after retries");
});

test("a non-retryable error fails the program; its slot starts the next after a back-off", () => {
  const { kernel, runtime, released, sent } = fakeRuntime((r) =>
    r.programId === "p0" ? Errors.badRequest("no") : null,
  );
  const records = newRecords();
  startProgramLoop({ runtime, workload, concurrency: 1, records });
  kernel.run(1);
  assert.equal(records.programs[0].outcome, "failed");
  assert.deepEqual(released, ["p0"]);
  assert.equal(sent[1].id, "p1/0");
  assert.equal(sent[1].at, FAILURE_BACKOFF_MS / 1000);
  assert.equal(records.errors[0].kind, "http_400_BadRequestError");
});

test("a preempted request is retried after Retry-After 1 s; its step's TTFT counts the retry", () => {
  let preempt = true;
  const { kernel, runtime, sent } = fakeRuntime(() => {
    if (!preempt) return null;
    preempt = false;
    return Errors.preempted();
  });
  const records = newRecords();
  startProgramLoop({ runtime, workload, concurrency: 1, records });
  kernel.run(3);
  assert.deepEqual(
    sent.slice(0, 2).map((s) => [s.id, s.at]),
    [
      ["p0/0", 0],
      ["p0/0.1", 1],
    ],
  );
  assert.deepEqual(
    records.errors.map((e) => e.kind),
    ["http_503_preempted"],
  );
  const step = records.steps[0];
  assert.equal(step.startMs, 0, "the step started with its first attempt");
  assert.equal((step.firstTokenMs as number) - step.startMs, 1100, "1 s retry + 100 ms");
});

test("a 408 queue timeout is retried like 429 and 503; the program goes on", () => {
  let timeouts = 1;
  const { kernel, runtime, sent } = fakeRuntime(() =>
    timeouts-- > 0 ? Errors.queueTimeout("waited") : null,
  );
  const records = newRecords();
  startProgramLoop({ runtime, workload, concurrency: 1, records });
  kernel.run(10);
  assert.equal(sent[1].id, "p0/0.1");
  assert.equal(records.errors[0].kind, "http_408_RequestTimeoutError");
  assert.equal(records.programs[0].outcome, "completed");
});

test("a program's class goes with each of its requests and into its record", () => {
  const classed: Workload = {
    ...workload,
    programAt: (i) => ({
      ...workload.programAt(i),
      priorityClass: i === 0 ? "interactive" : "bulk",
    }),
  };
  const { kernel, runtime, sent } = fakeRuntime(() => null);
  const records = newRecords();
  startProgramLoop({ runtime, workload: classed, concurrency: 2, records });
  kernel.run(2);
  assert.deepEqual(
    sent.map((s) => [s.id, s.priorityClass]),
    [
      ["p0/0", "interactive"],
      ["p1/0", "bulk"],
    ],
  );
  assert.deepEqual(
    records.programs.map((p) => p.priorityClass),
    ["interactive", "bulk"],
  );
});
