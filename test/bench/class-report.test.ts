import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { buildClassReports } from "../../src/bench/class-report.ts";
import { formatRunsTable } from "../../src/bench/format-table.ts";
import type { RunRecords, StepRecord } from "../../src/bench/records.ts";
import { buildRunReport } from "../../src/bench/report.ts";

const WINDOW = { startMs: 0, endMs: 60_000, closed: false };

function step(programId: string, endMs: number, extra: Partial<StepRecord> = {}): StepRecord {
  return {
    programId,
    stepIndex: 0,
    startMs: endMs - 1000,
    endMs,
    promptTokens: 100,
    cachedTokens: 0,
    completionTokens: 10,
    pausedMs: 0,
    ...extra,
  };
}

/** I: interactive, B: bulk, U: no class (counts as default). */
function records(): RunRecords {
  return {
    programs: [
      { programId: "I", launchMs: 0, outcome: "completed", priorityClass: "interactive" },
      { programId: "B", launchMs: 0, outcome: "failed", priorityClass: "bulk" },
      { programId: "U", launchMs: 0, outcome: "unfinished" },
    ],
    steps: [
      step("I", 10_000, { firstTokenMs: 9_100 }), // TTFT 100
      step("I", 20_000, { firstTokenMs: 19_300, pausedMs: 250 }), // TTFT 300
      step("B", 30_000, { firstTokenMs: 29_500, pausedMs: 40_000 }),
      step("B", 90_000, { firstTokenMs: 89_500 }), // after the window
      step("U", 5_000),
    ],
    errors: [
      { programId: "B", stepIndex: 1, atMs: 31_000, kind: "http_503_preempted" },
      { programId: "B", stepIndex: 1, atMs: 32_000, kind: "http_503_preempted" },
      { programId: "I", stepIndex: 2, atMs: 70_000, kind: "http_408_RequestTimeoutError" },
    ],
    endMs: 100_000,
  };
}

describe("per-class report", () => {
  it("splits steps, TTFT, router holds and errors by the class of their program", () => {
    const c = buildClassReports(records(), WINDOW);
    assert.deepEqual(Object.keys(c), ["interactive", "default", "bulk"], "class order");
    const i = c.interactive;
    assert.ok(i);
    assert.equal(i.steps_completed, 2);
    assert.equal(i.steps_per_min, 2);
    assert.deepEqual([i.ttft_ms.p50, i.ttft_ms.max, i.ttft_ms.count], [200, 300, 2]);
    assert.deepEqual(i.queue_wait_ms, { p95: 237.5, max: 250, steps_held: 1 });
    assert.equal(i.errors_total, 0, "its 408 came after the window");
    const b = c.bulk;
    assert.ok(b);
    assert.equal(b.steps_completed, 1, "a step after the window does not count");
    assert.equal(b.queue_wait_ms.max, 40_000);
    assert.deepEqual(b.errors, { http_503_preempted: 2 });
    assert.equal(b.programs_failed, 1);
    const u = c.default;
    assert.ok(u, "a program without a class counts as default");
    assert.equal(u.ttft_ms.count, 0);
    assert.equal(u.ttft_ms.p95, null, "no TTFT measured: null, not 0");
  });

  it("the run report carries the classes and its own TTFT; the table shows a class section", () => {
    const r = buildRunReport(
      {
        router: "tr",
        concurrency: 3,
        workload: "w",
        seed: 1,
        timeScale: 1,
        warmupMs: 0,
        durationMs: 60_000,
      },
      records(),
    );
    assert.equal(r.ttft_ms.count, 3, "steps in the window that measured a first token");
    assert.ok(r.classes.bulk && r.classes.interactive);
    const table = formatRunsTable([r, r]);
    assert.match(table, /interactive TTFT p95 \(ms\)\s+\d+\s+\d+ \(1\.00x\)/);
    assert.match(table, /http_503_preempted\s+2\s+2/);
  });

  it("a run whose programs all lack a class prints no class section", () => {
    const plain = records();
    plain.programs = plain.programs.map(({ priorityClass: _, ...p }) => p);
    const r = buildRunReport(
      { router: "tr", concurrency: 3, workload: "w", seed: 1, timeScale: 1, warmupMs: 0 },
      plain,
    );
    assert.deepEqual(Object.keys(r.classes), ["default"]);
    assert.doesNotMatch(formatRunsTable([r]), /per class/);
  });
});
