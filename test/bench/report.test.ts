import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatRunsTable } from "../../src/bench/format-table.ts";
import type { RunMeta, RunRecords, StepRecord } from "../../src/bench/records.ts";
import { benchJson, buildRunReport, steadyWindow, stepsPerMinute } from "../../src/bench/report.ts";
import { renderSvgChart } from "../../src/bench/svg-chart.ts";

const META: RunMeta = {
  router: "tr",
  concurrency: 4,
  workload: "deepseek",
  seed: 1,
  timeScale: 1,
  warmupMs: 10_000,
  durationMs: 60_000,
};

function step(endMs: number, latency: number, extra: Partial<StepRecord> = {}): StepRecord {
  return {
    programId: "p0",
    stepIndex: 0,
    startMs: endMs - latency,
    endMs,
    promptTokens: 1000,
    cachedTokens: 800,
    completionTokens: 50,
    pausedMs: 0,
    ...extra,
  };
}

describe("steady window", () => {
  it("starts after the warm-up and lasts the duration", () => {
    assert.deepEqual(steadyWindow(META, 100_000), {
      startMs: 10_000,
      endMs: 70_000,
      closed: false,
    });
  });

  it("is clipped by an early end and runs to the end without a duration, that end included", () => {
    assert.deepEqual(steadyWindow(META, 40_000), { startMs: 10_000, endMs: 40_000, closed: true });
    assert.deepEqual(steadyWindow({ warmupMs: 0 }, 5000), {
      startMs: 0,
      endMs: 5000,
      closed: true,
    });
    assert.deepEqual(steadyWindow(META, 5000), { startMs: 5000, endMs: 5000, closed: false });
  });

  it("steps/min counts only steps ending inside [start, end), or [start, end] at the run's end", () => {
    const w = { startMs: 10_000, endMs: 70_000, closed: false };
    // 9_999 is warm-up, 70_000 is past the end: 3 steps in one minute.
    assert.equal(stepsPerMinute([9_999, 10_000, 30_000, 69_999, 70_000], w), 3);
    assert.equal(
      stepsPerMinute([9_999, 10_000, 30_000, 69_999, 70_000], { ...w, closed: true }),
      4,
    );
    assert.equal(stepsPerMinute([1, 2], { startMs: 5, endMs: 5, closed: false }), 0);
  });

  it("a run that ends by itself counts the step that ends it (a virtual clock's exact end)", () => {
    const r = buildRunReport(
      { ...META, durationMs: undefined, warmupMs: 0 },
      {
        steps: [step(3000, 1000), step(5000, 1000, { stepIndex: 1 })],
        errors: [],
        programs: [{ programId: "p0", launchMs: 0, endMs: 5000, outcome: "completed" }],
        endMs: 5000,
      },
    );
    assert.equal(r.steps_completed, 2);
    assert.equal(r.programs_completed, 1);
  });
});

describe("buildRunReport", () => {
  const records: RunRecords = {
    endMs: 70_000,
    steps: [
      step(5_000, 900), // warm-up: excluded
      step(20_000, 100, { pausedMs: 40 }),
      step(30_000, 200),
      step(40_000, 300, { cachedTokens: null }),
      step(50_000, 400),
    ],
    errors: [
      { programId: "p1", stepIndex: 2, atMs: 1, kind: "http_503" },
      { programId: "p1", stepIndex: 2, atMs: 2, kind: "http_503" },
      { programId: "p2", stepIndex: 0, atMs: 3, kind: "transport_ECONNRESET" },
    ],
    programs: [
      { programId: "p0", launchMs: 0, firstResponseMs: 1_000, endMs: 30_000, outcome: "completed" },
      {
        programId: "p1",
        launchMs: 500,
        firstResponseMs: 4_500,
        endMs: 8_000,
        outcome: "completed",
      },
      { programId: "p2", launchMs: 1000, endMs: 2000, outcome: "failed" },
      { programId: "p3", launchMs: 2000, firstResponseMs: 4000, outcome: "unfinished" },
    ],
  };
  const r = buildRunReport(META, records);

  it("reports throughput and latency percentiles over the window only", () => {
    assert.equal(r.steps_completed, 4);
    assert.equal(r.steps_per_min, 4);
    assert.equal(r.step_latency_ms.p50, 250);
    assert.equal(r.step_latency_ms.p95, 385);
    assert.equal(r.step_latency_ms.p99, 397);
    assert.equal(r.step_latency_ms.max, 400);
  });

  it("counts programs completed in the window apart from the run total and failures", () => {
    assert.equal(r.programs_started, 4);
    assert.equal(r.programs_completed, 1);
    assert.equal(r.programs_completed_total, 2);
    assert.equal(r.programs_failed, 1);
  });

  it("time to first response is per program with its spread", () => {
    assert.equal(r.first_response_ms.count, 3);
    assert.equal(r.first_response_ms.min, 1000);
    assert.equal(r.first_response_ms.max, 4000);
    assert.equal(r.first_response_ms.spread, 3000);
  });

  it("cache figures ignore steps whose backend reported none; paused time is summed", () => {
    assert.equal(r.prompt_tokens.total, 4000);
    assert.equal(r.prompt_tokens.cached, 2400);
    assert.equal(r.prompt_tokens.prefilled, 600);
    assert.equal(r.prompt_tokens.cache_hit_rate, 0.8);
    assert.deepEqual(r.paused_ms, {
      total: 40,
      steps_paused: 1,
      per_step_p95: 34,
      per_step_max: 40,
    });
  });

  it("groups errors by kind", () => {
    assert.deepEqual(r.errors, { http_503: 2, transport_ECONNRESET: 1 });
    assert.equal(r.errors_total, 3);
  });

  it("a backend without cache figures reports them as unknown, not as zero hits", () => {
    const silent = buildRunReport(META, {
      ...records,
      steps: [step(20_000, 100, { cachedTokens: null })],
    });
    assert.equal(silent.prompt_tokens.cached, null);
    assert.equal(silent.prompt_tokens.cache_hit_rate, null);
  });

  it("the JSON document has the documented shape and survives a round trip", () => {
    const doc = JSON.parse(JSON.stringify(benchJson([r])));
    const run = doc.runs[0];
    for (const key of [
      "router",
      "concurrency",
      "steps_per_min",
      "programs_completed",
      "step_latency_ms",
    ]) {
      assert.ok(key in run, `missing ${key}`);
    }
    assert.deepEqual(Object.keys(run.step_latency_ms).sort(), ["max", "mean", "p50", "p95", "p99"]);
  });

  it("an empty run reports nulls rather than NaN", () => {
    const empty = buildRunReport(META, { endMs: 0, steps: [], errors: [], programs: [] });
    assert.equal(empty.steps_per_min, 0);
    assert.equal(empty.step_latency_ms.p50, null);
    assert.ok(!JSON.stringify(empty).includes("NaN"));
  });
});

describe("tables and charts", () => {
  const base = buildRunReport(
    { ...META, router: "default", warmupMs: 0, durationMs: 60_000 },
    {
      endMs: 60_000,
      steps: [step(10_000, 100), step(20_000, 100)],
      errors: [],
      programs: [],
    },
  );
  const tr = buildRunReport(
    { ...META, router: "tr", warmupMs: 0, durationMs: 60_000 },
    {
      endMs: 60_000,
      steps: [
        step(10_000, 50),
        step(20_000, 50),
        step(30_000, 50),
        step(40_000, 50),
        step(50_000, 50),
      ],
      errors: [{ programId: "x", stepIndex: 0, atMs: 0, kind: "http_429" }],
      programs: [],
    },
  );

  it("the side-by-side table shows each run and its ratio to the first", () => {
    const table = formatRunsTable([base, tr]);
    assert.match(table, /default \(C=4\)/);
    assert.match(table, /steps\/min\s+2\.0\s+5\.0 \(2\.50x\)/);
    assert.match(table, /http_429\s+0\s+1/);
  });

  it("the SVG has one bar per run in each panel and escapes labels", () => {
    const svg = renderSvgChart([base, { ...tr, router: "a<b" }]);
    assert.ok(svg.startsWith("<svg"));
    assert.equal((svg.match(/<rect /g) ?? []).length, 1 + 4, "background + 2 panels × 2 runs");
    assert.ok(svg.includes("a&lt;b"));
    assert.ok(!svg.includes("a<b"));
  });
});
