import assert from "node:assert/strict";
import { test } from "node:test";
import { BATCH_HORIZON_MS } from "../../src/simulate/run-simulation.ts";
import { resolveTrKnobs } from "../../src/simulate/simulate-options.ts";
import { simulateJson } from "../../src/simulate/simulate-report.ts";
import { markUnreleased } from "../../src/workload/unreleased.ts";
import { logCounter, sharedRun, smallRun, smallWorkload } from "./helpers.ts";

test("two runs with the same inputs give byte-identical JSON", () => {
  // Half a simulated minute is plenty to tell identical runs from different ones.
  const short = { warmupMs: 5000, durationMs: 25_000 };
  const a = simulateJson([smallRun(short).report]);
  const b = simulateJson([smallRun(short).report]);
  assert.equal(a, b, "same options must give the same JSON (no wall times, no randomness)");
  const c = simulateJson([smallRun({ ...short, engineSeed: 2 }).report]);
  assert.notEqual(a, c, "a different engine seed must change something, or the check is vacuous");
});

test("a small run completes programs and records steps under both tr and default", () => {
  for (const router of ["tr", "default"] as const) {
    const { report, records } = sharedRun({ router });
    assert.ok(report.programs_completed_total >= 1, `${router}: got no completed program`);
    assert.ok(report.steps_completed > 0, `${router}: no step ended in the window`);
    assert.ok(report.steps_per_min > 0, `${router}: steps/min`);
    assert.equal(report.errors_total, 0, `${router}: errors ${JSON.stringify(report.errors)}`);
    // Closed loop: never more programs launched than finished + the concurrency.
    const ended = records.programs.filter((p) => p.outcome !== "unfinished").length;
    assert.ok(records.programs.length <= ended + 12, `${router}: loop exceeded its concurrency`);
  }
});

test("the oracle (unbounded KV) never preempts where the default router on the tiny cache does", () => {
  const oracle = sharedRun({ router: "oracle" }).report;
  const plain = sharedRun({ router: "default" }).report;
  const preemptions = (r: typeof oracle) => r.backends.reduce((a, b) => a + b.preemptions, 0);
  assert.equal(preemptions(oracle), 0, "oracle preempted");
  assert.equal(
    oracle.backends.reduce((a, b) => a + b.recomputed_tokens, 0),
    0,
    "oracle recomputed tokens",
  );
  assert.ok(preemptions(plain) > 0, "the same load on the tiny cache must preempt under default");
  assert.ok(oracle.simulated.num_gpu_blocks > 2000, "oracle engines must be larger than the cache");
});

test("tr pauses programs when the tiny cache overflows, and paused steps record their wait", () => {
  const { report } = sharedRun({ router: "tr" });
  assert.ok(report.scheduler.pauses > 0, "core paused nobody under pressure");
  assert.ok(report.scheduler.resumes > 0, "paused programs were never resumed");
  assert.ok(report.paused_ms.steps_paused > 0, "no step waited in the core's queue");
  assert.ok(report.paused_ms.total > 0);
  const plain = sharedRun({ router: "default" }).report;
  assert.equal(plain.scheduler.pauses, 0, "the default router never pauses");
  assert.ok(
    (report.prompt_tokens.cache_hit_rate as number) >
      (plain.prompt_tokens.cache_hit_rate as number),
    "pausing should keep the running programs' prefix cache warmer than thrashing",
  );
});

test("a request still parked when the run ends shows in still_parked_max_ms, not in paused_ms", () => {
  const { report } = sharedRun({ router: "tr" });
  const parked = report.still_parked_max_ms;
  assert.ok(parked !== null && parked > 0, "tr on the tiny cache ends with a request parked");
  assert.ok(parked <= 180_000, "no wait is longer than the run");
  assert.equal(
    sharedRun({ router: "default" }).report.still_parked_max_ms,
    null,
    "default parks none",
  );
});

test("the report's scheduler counters are the real core's decisions (they match its decision logs)", () => {
  const { onLog, counts } = logCounter();
  // A simulated minute already has a dozen pauses under this load.
  const { report } = smallRun({ router: "tr", warmupMs: 0, durationMs: 60_000, onLog });
  assert.ok(report.scheduler.pauses > 0);
  assert.equal(report.scheduler.pauses, counts.get("program paused") ?? 0, "pauses");
  assert.equal(report.scheduler.marks, counts.get("program marked for pause") ?? 0, "marks");
  assert.equal(
    report.scheduler.resumes,
    (counts.get("program resumed") ?? 0) + (counts.get("program force-resumed") ?? 0),
  );
  assert.equal(report.simulated.scheduler_config.mode, "tr");
});

test("engine truth: KV usage is sampled every tick and summarised over the window", () => {
  const { report } = sharedRun({ router: "default", schedulerIntervalMs: 5000 });
  const ticks = report.series.t_s.length;
  assert.equal(ticks, 37, "ticks at 0, 5, ..., 180 s");
  for (const b of report.series.backends) assert.equal(b.kv_usage.length, ticks);
  for (const b of report.backends) {
    assert.ok(b.kv_usage.max !== null && b.kv_usage.max > 0.5, "tiny cache should fill up");
    assert.ok((b.kv_usage.mean as number) <= (b.kv_usage.max as number));
    assert.ok(b.prefix_cache_hit_rate !== null);
  }
});

test("engine truth: a host tier's use is sampled every tick beside the GPU's, and only with a tier", () => {
  const plain = sharedRun({ router: "default", schedulerIntervalMs: 5000 });
  for (const b of plain.report.series.backends) assert.equal(b.host_usage, undefined);
  // 0.05 GiB holds 400 blocks of Llama-3.1-8B: the tiny cache's evictions fill it.
  const tiered = smallRun({ router: "default", schedulerIntervalMs: 5000, kvOffloadingSize: 0.05 });
  const ticks = tiered.report.series.t_s.length;
  for (const b of tiered.report.series.backends) {
    const host = b.host_usage ?? [];
    assert.equal(host.length, ticks);
    assert.equal(host[0], 0, "empty at the start");
    assert.ok(host.every((v) => v >= 0 && v <= 1));
    assert.ok(Math.max(...host) > 0.5, `${b.id}: evicted KV filled the host tier`);
  }
});

test("a forced resume fires at its deadline between two ticks, as the HTTP runtime arms it", () => {
  const { knobs } = resolveTrKnobs({ maxPause: "7s" });
  const { report, records } = smallRun({
    router: "tr",
    schedulerIntervalMs: 5000,
    knobs,
    durationMs: 60_000, // a simulated minute: a dozen forced resumes already
  });
  assert.ok(report.scheduler.forcedResumes > 0, "want forced resumes with a 7 s max pause");
  const waits = records.steps.map((s) => s.pausedMs);
  // The tick after a request parks arms its deadline (src/service/service.ts), so it is
  // forced at exactly 7 s, not at the next 5 s tick (10 s).
  assert.ok(
    waits.some((w) => Math.abs(w - 7000) < 1e-3),
    "no step was force-resumed exactly at its deadline",
  );
  const longest = Math.max(...waits);
  assert.ok(longest < 7000 + 1e-3, `a step waited ${longest} ms, past the 7 s max pause`);
});

/** A fixed batch (`--programs 3`) of the small workload, two at a time, with no window. */
const batchRun = (over: Parameters<typeof smallRun>[0] = {}) =>
  smallRun({
    concurrency: 2,
    maxPrograms: 3,
    warmupMs: 0,
    durationMs: BATCH_HORIZON_MS,
    ...over,
  });

test("a fixed batch of 3 runs exactly 3 programs and ends with the last of them", () => {
  const { report, records } = batchRun();
  assert.equal(records.programs.length, 3, "no slot started a fourth program");
  assert.ok(records.programs.every((p) => p.outcome === "completed"));
  const lastEnd = Math.max(...records.programs.map((p) => p.endMs as number));
  assert.equal(records.endMs, lastEnd, "the run ends when its last program does");
  assert.deepEqual(report.batch, {
    programs: 3,
    completed: 3,
    failed: 0,
    unfinished: 0,
    makespan_ms: Math.round(lastEnd),
  });
  // Every program of the batch is timed: first request to its end.
  const times = records.programs.map((p) => (p.endMs as number) - p.launchMs).sort((a, b) => a - b);
  assert.equal(report.program_completion_ms.count, 3);
  assert.equal(report.program_completion_ms.p50, Math.round(times[1] * 10) / 10);
  assert.equal(report.program_completion_ms.max, Math.round(times[2] * 10) / 10);
  assert.ok(lastEnd < BATCH_HORIZON_MS, "the batch, not the horizon, ended the run");
});

test("a batch whose clients never release it still ends with the last step, not the idle timeout", () => {
  const workload = markUnreleased(smallWorkload(), 1);
  const { report, records } = batchRun({ workload });
  for (const p of records.programs) {
    const last = records.steps.filter((s) => s.programId === p.programId).at(-1);
    assert.equal(p.endMs, last?.endMs, `${p.programId} ends with its last step`);
  }
  assert.equal(report.batch?.makespan_ms, Math.round(records.endMs));
  assert.equal(report.batch?.completed, 3);
});

test("a window shorter than the batch stops it: no makespan, the rest unfinished", () => {
  const { report, records } = batchRun({ durationMs: 30_000 });
  assert.equal(records.endMs, 30_000);
  assert.equal(report.batch?.makespan_ms, null);
  assert.ok((report.batch?.unfinished ?? 0) > 0);
  assert.equal(
    report.program_completion_ms.unfinished,
    records.programs.filter((p) => p.outcome === "unfinished").length,
  );
});
