import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatRunsTable } from "../../src/bench/format-table.ts";
import {
  batchReport,
  completionMs,
  completionTimes,
  programCompletion,
} from "../../src/bench/program-completion.ts";
import type { ProgramRecord, RunMeta, RunRecords } from "../../src/bench/records.ts";
import { buildRunReport } from "../../src/bench/report.ts";

const WINDOW = { startMs: 10_000, endMs: 100_000, closed: false };

const done = (programId: string, launchMs: number, endMs: number): ProgramRecord => ({
  programId,
  launchMs,
  endMs,
  outcome: "completed",
});

/** Programs around a window of 10–100 s, each case the report must treat its own way. */
const PROGRAMS: ProgramRecord[] = [
  done("warm", 0, 8_000), // completed in the warm-up: not timed
  done("early", 2_000, 42_000), // started in the warm-up, completed in the window: 40 s
  done("a", 12_000, 22_000), // 10 s
  done("b", 20_000, 50_000), // 30 s
  done("c", 30_000, 50_000), // 20 s
  done("late", 60_000, 100_000), // ends as the window closes by its duration: past it
  { programId: "failed", launchMs: 1_000, endMs: 15_000, outcome: "failed" },
  { programId: "running", launchMs: 40_000, outcome: "unfinished" },
];

describe("program completion time", () => {
  it("runs from the first request to the end, for completed programs only", () => {
    assert.equal(completionMs(done("x", 1_500, 9_000)), 7_500);
    assert.equal(completionMs(PROGRAMS[6]), undefined, "a failed program is not timed");
    assert.equal(completionMs(PROGRAMS[7]), undefined, "nor one still running");
  });

  it("times the programs completed in the window, whatever their start", () => {
    assert.deepEqual(completionTimes(PROGRAMS, WINDOW), [40_000, 10_000, 30_000, 20_000]);
    // A window the run's end closed includes a program ending at that very instant.
    assert.deepEqual(completionTimes(PROGRAMS, { ...WINDOW, closed: true }).at(-1), 40_000);
  });

  it("p50 / p95 / max interpolate over those, and those still running are counted apart", () => {
    const c = programCompletion(
      { steps: [], errors: [], programs: PROGRAMS, endMs: 100_000 },
      WINDOW,
    );
    // Sorted 10, 20, 30, 40 s: p50 halfway from 20 to 30, p95 0.85 of the way from 30 to 40.
    assert.equal(c.count, 4);
    assert.equal(c.p50, 25_000);
    assert.equal(c.p95, 38_500);
    assert.equal(c.max, 40_000);
    assert.equal(c.unfinished, 1);
  });

  it("no program completed in the window gives nulls, not NaN", () => {
    const c = programCompletion({ steps: [], errors: [], programs: [], endMs: 0 }, WINDOW);
    assert.deepEqual(
      { count: c.count, p50: c.p50, p95: c.p95, max: c.max },
      { count: 0, p50: null, p95: null, max: null },
    );
  });
});

describe("a fixed batch", () => {
  const records = (programs: ProgramRecord[]): RunRecords => ({
    steps: [],
    errors: [],
    programs,
    endMs: 90_000,
  });

  it("its makespan is the end of its last program, a failed one included", () => {
    const b = batchReport(
      records([
        done("p0", 0, 30_000),
        { programId: "p1", launchMs: 100, endMs: 70_000, outcome: "failed" },
        done("p2", 30_000, 61_000),
      ]),
      3,
    );
    assert.deepEqual(b, {
      programs: 3,
      completed: 2,
      failed: 1,
      unfinished: 0,
      makespan_ms: 70_000,
    });
  });

  it("has no makespan while a program is unfinished or was never launched", () => {
    const running = batchReport(
      records([done("p0", 0, 30_000), { programId: "p1", launchMs: 0, outcome: "unfinished" }]),
      2,
    );
    assert.equal(running.makespan_ms, null);
    assert.equal(running.unfinished, 1);
    const short = batchReport(records([done("p0", 0, 30_000)]), 4);
    assert.deepEqual(short, {
      programs: 4,
      completed: 1,
      failed: 0,
      unfinished: 3,
      makespan_ms: null,
    });
  });
});

describe("in the run report and its table", () => {
  const meta: RunMeta = {
    router: "default",
    concurrency: 2,
    workload: "w",
    seed: 1,
    timeScale: 1,
    warmupMs: 0,
  };
  const batchRun = (router: string, ends: number[]) =>
    buildRunReport(
      { ...meta, router, programs: ends.length },
      records(ends.map((end, i) => done(`p${i}`, i * 1000, end))),
    );
  const records = (programs: ProgramRecord[]): RunRecords => ({
    steps: [],
    errors: [],
    programs,
    endMs: Math.max(...programs.map((p) => p.endMs ?? 0)),
  });

  it("a run without --programs has completion times and no batch", () => {
    const r = buildRunReport(meta, records([done("p0", 0, 4_000), done("p1", 1_000, 9_000)]));
    assert.equal(r.program_completion_ms.count, r.programs_completed);
    assert.equal(r.program_completion_ms.max, 8_000);
    assert.equal(r.batch, undefined);
    const table = formatRunsTable([r]);
    assert.match(table, /program completion p50 \(s\)\s+6\.0/);
    assert.doesNotMatch(table, /makespan/, "no batch, no makespan row");
    assert.match(table, /program completion: first request -> release/);
  });

  it("compare tables give completion and makespan with their ratio to the first run", () => {
    const slow = batchRun("default", [20_000, 40_000, 60_000]);
    const fast = batchRun("tr", [10_000, 20_000, 30_000]);
    assert.equal(fast.batch?.makespan_ms, 30_000);
    const table = formatRunsTable([slow, fast]);
    assert.match(table, /batch makespan \(s\)\s+60\.0\s+30\.0 \(0\.50x\)/);
    assert.match(table, /program completion max \(s\)\s+58\.0\s+28\.0 \(0\.48x\)/);
    assert.match(table, /batch programs ended\s+3\s+3\n/);
    assert.match(table, /the last of the batch's 3 programs ends/);
  });
});
