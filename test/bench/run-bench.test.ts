import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { runBench } from "../../src/bench/run-bench.ts";
import { createVirtualClock, type VirtualClock } from "../../src/runtime/clock.ts";
import { type SimBackend, startSimBackend } from "../../src/sim-server/start-sim-backend.ts";
import { parseTrace } from "../../src/workload/trace-parser.ts";
import { createWorkload } from "../../src/workload/workload.ts";

/**
 * The bench and the simulated backend share one virtual clock (src/runtime/clock.ts): engine
 * steps and tool times are jumps of the clock, taken once the loopback I/O has settled, so
 * the runs model minutes at the shipped time scale (1) in a fraction of a second.
 */
const TIME_SCALE = 1;

const TRACE = [
  '{"id":"a","steps":[{"prompt_tokens":900,"completion_tokens":40,"tool_ms":200},{"prompt_tokens":1300,"completion_tokens":60,"tool_ms":300},{"prompt_tokens":1700,"completion_tokens":20}]}',
  '{"id":"b","steps":[{"prompt_tokens":1200,"completion_tokens":30,"tool_ms":100},{"prompt_tokens":1500,"completion_tokens":10}]}',
  '{"id":"c","steps":[{"prompt_tokens":600,"completion_tokens":25,"tool_ms":50},{"prompt_tokens":800,"completion_tokens":25,"tool_ms":50},{"prompt_tokens":1000,"completion_tokens":25,"tool_ms":50},{"prompt_tokens":1200,"completion_tokens":25}]}',
].join("\n");

describe("maitred bench against an in-process simulated backend", () => {
  let backend: SimBackend;
  let clock: VirtualClock;
  before(async () => {
    clock = createVirtualClock();
    backend = await startSimBackend({
      port: 0,
      timeScale: TIME_SCALE,
      enablePromptTokensDetails: true,
      clock,
    });
  });
  after(async () => {
    await backend.close();
    clock.stop();
  });

  /** The three-program trace, two at a time, until every program has run. */
  async function replayTrace(streamShare?: number) {
    const workload = createWorkload(
      { kind: "trace", file: "t.jsonl", seed: 2 },
      parseTrace(TRACE, "t.jsonl"),
    );
    const run = await runBench({
      router: "sim",
      url: backend.url,
      workload,
      model: backend.options.model,
      concurrency: 2,
      timeScale: TIME_SCALE,
      clock,
      warmupMs: 0,
      maxPrograms: 3,
      ...(streamShare === undefined ? {} : { streamShare }),
    });
    return { ...run, workload };
  }

  it("replays every trace step with the trace's prompt size and completion length", async () => {
    const { report, records, workload } = await replayTrace();
    assert.deepEqual(report.errors, {}, `want no errors, got ${JSON.stringify(report.errors)}`);
    assert.equal(report.programs_completed_total, 3);
    assert.equal(report.steps_completed, 9);
    for (const s of records.steps) {
      const plan = [0, 1, 2]
        .map((i) => workload.programAt(i))
        .find((p) => p.programId === s.programId)!;
      assert.equal(
        s.promptTokens,
        plan.steps[s.stepIndex].promptTokens,
        `${s.programId} step ${s.stepIndex}`,
      );
      assert.equal(s.completionTokens, plan.steps[s.stepIndex].completionTokens);
    }
  });

  it("a fixed batch (--programs 3) reports its makespan and each program's completion time", async () => {
    const { report, records } = await replayTrace();
    const ends = records.programs.map((p) => p.endMs as number);
    assert.equal(records.programs.length, 3);
    assert.deepEqual(report.batch, {
      programs: 3,
      completed: 3,
      failed: 0,
      unfinished: 0,
      makespan_ms: Math.round(Math.max(...ends)),
    });
    // Each program from its first request (its first step's start) to its last response.
    for (const p of records.programs) {
      const own = records.steps.filter((s) => s.programId === p.programId);
      assert.equal(p.launchMs, own[0].startMs, `${p.programId} starts with its first request`);
      assert.equal(p.endMs, own.at(-1)?.endMs, `${p.programId} ends with its last response`);
    }
    assert.equal(report.program_completion_ms.count, 3, "no window: the whole batch is timed");
  });

  it("plain JSON requests (--no-stream) replay the same steps, without a first token", async () => {
    const { report, records } = await replayTrace(0);
    assert.deepEqual(report.errors, {});
    assert.equal(report.steps_completed, 9);
    for (const s of records.steps) {
      assert.equal(s.firstTokenMs, undefined, "a plain response has no first token to see");
      assert.ok(s.promptTokens > 0 && s.completionTokens > 0, "usage read from the JSON body");
    }
  });

  it("later turns are served from the prefix cache", async () => {
    // Chat sessions: every turn's prompt is the conversation so far, a few turns each.
    const workload = createWorkload({ kind: "preset", name: "chat", seed: 3 });
    const { report, records } = await runBench({
      router: "sim",
      url: `${backend.url}/v1`,
      workload,
      model: backend.options.model,
      concurrency: 3,
      timeScale: TIME_SCALE,
      clock,
      warmupMs: 0,
      maxPrograms: 4,
    });
    assert.equal(report.errors_total, 0);
    assert.equal(report.programs_completed_total, 4);
    const later = records.steps.filter((s) => s.stepIndex > 0);
    assert.ok(later.length > 0);
    // Each later prompt extends the previous one, so at least the previous prompt's full
    // blocks are cached (block size 16) unless the cache evicted them (it is far from full).
    for (const s of later) {
      assert.ok((s.cachedTokens ?? 0) > 0, `step ${s.stepIndex} of ${s.programId}: no cache hit`);
    }
    assert.ok(
      (report.prompt_tokens.cache_hit_rate ?? 0) > 0.8,
      `hit rate ${report.prompt_tokens.cache_hit_rate}`,
    );
  });

  it("a model the backend does not serve fails programs with a 404 kind, and nothing crashes", async () => {
    const workload = createWorkload(
      { kind: "trace", file: "t.jsonl" },
      parseTrace(TRACE, "t.jsonl"),
    );
    const { report } = await runBench({
      router: "sim",
      url: backend.url,
      workload,
      model: "no-such-model",
      concurrency: 1,
      timeScale: TIME_SCALE,
      clock,
      warmupMs: 0,
      maxPrograms: 2,
    });
    assert.equal(report.programs_failed, 2);
    assert.equal(report.steps_completed, 0);
    // A batch of failed programs still ends: a rollout waits for failures too.
    assert.equal(report.batch?.failed, 2);
    assert.notEqual(report.batch?.makespan_ms, null);
    assert.equal(report.program_completion_ms.count, 0, "a failed program is not timed");
    assert.ok(
      Object.keys(report.errors).every((k) => k.startsWith("http_404")),
      JSON.stringify(report.errors),
    );
  });
});
