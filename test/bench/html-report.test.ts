import assert from "node:assert/strict";
import { test } from "node:test";
import { renderHtmlReport } from "../../src/bench/html-report.ts";
import type { RunRecords, StepRecord } from "../../src/bench/records.ts";
import { buildRunReport } from "../../src/bench/report.ts";

function step(programId: string, startMs: number, endMs: number, pausedMs: number): StepRecord {
  return {
    programId,
    stepIndex: 0,
    startMs,
    endMs,
    promptTokens: 100,
    cachedTokens: 50,
    completionTokens: 10,
    pausedMs,
  };
}

function run(router: string, steps: StepRecord[]) {
  const records: RunRecords = {
    steps,
    errors: [],
    programs: [
      { programId: "a", launchMs: 0, outcome: "completed", endMs: 9000 },
      { programId: "b", launchMs: 100, outcome: "completed", endMs: 9000 },
    ],
    endMs: 10_000,
  };
  const meta = {
    router,
    concurrency: 2,
    workload: "w",
    seed: 1,
    timeScale: 1,
    warmupMs: 0,
    durationMs: 10_000,
  };
  return { report: buildRunReport(meta, records), records };
}

test("the HTML report is one page with everything inlined: the runs, the CDF's data, KV when recorded, a strip per program", () => {
  const tr = run("tr", [
    step("a", 0, 1000, 0),
    step("b", 100, 3100, 2000),
    step("a", 4000, 4500, 0),
  ]);
  const dflt = run("default", [step("a", 0, 6000, 0), step("b", 100, 8100, 0)]);
  const html = renderHtmlReport(
    [
      {
        ...tr,
        kv: {
          t_s: [0, 5, 10],
          backends: [{ id: "b0", kv_usage: [0, 0.5, 0.25], host_usage: [0, 0.1, 0.3] }],
        },
      },
      dflt,
    ],
    "a <test> run",
  );
  assert.match(html, /<title>a &lt;test&gt; run<\/title>/, "text is escaped");
  assert.doesNotMatch(html, /<script src=|<link /, "nothing loaded from elsewhere");
  assert.match(html, /uPlot/, "the chart library is inlined");
  assert.match(html, /<td>tr · C=2<\/td>/);
  assert.match(html, /<td>default · C=2<\/td>/);
  const data = JSON.parse(/const D = (.*);\n/.exec(html)?.[1] ?? "null") as {
    cdf: { x: number[]; y: number[][] };
    kv: unknown[];
  };
  assert.equal(data.cdf.y.length, 2);
  for (const ys of data.cdf.y) {
    assert.ok(
      ys.every((v, i) => i === 0 || v >= (ys[i - 1] as number)),
      "a CDF never falls",
    );
    assert.equal(ys.at(-1), 1, "every step is at or under the longest latency");
  }
  assert.deepEqual(
    data.kv[0],
    {
      t_s: [0, 5, 10],
      backends: [{ id: "b0", kv_usage: [0, 0.5, 0.25], host_usage: [0, 0.1, 0.3] }],
    },
    "the host tier's use travels with the GPU's",
  );
  assert.deepEqual(data.kv[1], null, "the second run recorded no KV");
  assert.ok(html.includes('id="kv-0"') && !html.includes('id="kv-1"'));
  // The tr run's timeline: b was held 2 s (one orange strip), three running strips.
  const trSvg = html.slice(
    html.indexOf("tr · C=2: the first"),
    html.indexOf("default · C=2: the first"),
  );
  assert.equal((trSvg.match(/fill="#d35400"/g) ?? []).length, 1);
  assert.equal((trSvg.match(/fill="#2f5fb3"/g) ?? []).length, 3);
});

test("the latency CDF counts the steps the table counts: those ending in the steady window", () => {
  const records: RunRecords = {
    // Warm-up steps of 1 s, window steps of 10 s.
    steps: [step("a", 0, 1000, 0), step("b", 1000, 2000, 0), step("a", 6000, 16_000, 0)],
    errors: [],
    programs: [{ programId: "a", launchMs: 0, outcome: "completed", endMs: 16_000 }],
    endMs: 20_000,
  };
  const meta = {
    router: "tr",
    concurrency: 1,
    workload: "w",
    seed: 1,
    timeScale: 1,
    warmupMs: 5000,
    durationMs: 15_000,
  };
  const html = renderHtmlReport([{ report: buildRunReport(meta, records), records }], "t");
  const data = JSON.parse(/const D = (.*);\n/.exec(html)?.[1] ?? "null") as {
    cdf: { x: number[]; y: number[][] };
  };
  assert.equal(data.cdf.y[0]?.[0], 1, "its one step is 10 s, so the CDF starts at 1");
  assert.equal(data.cdf.x[0], 10);
});

test("a run whose sampled /metrics never gave a KV figure gets the note, not an empty chart", () => {
  const r = run("tr", [step("a", 0, 1000, 0)]);
  const html = renderHtmlReport(
    [{ ...r, kv: { t_s: [0, 1], backends: [{ id: "http://x", kv_usage: [null, null] }] } }],
    "t",
  );
  assert.ok(!html.includes('id="kv-0"'));
  assert.match(html, /Not recorded in these runs/);
});

test("the completion-time CDF and the table count the programs completed in the window", () => {
  const records: RunRecords = {
    steps: [],
    errors: [],
    programs: [
      { programId: "warm", launchMs: 0, outcome: "completed", endMs: 4_000 }, // in the warm-up
      { programId: "a", launchMs: 0, outcome: "completed", endMs: 20_000 }, // 20 s
      { programId: "b", launchMs: 6_000, outcome: "completed", endMs: 16_000 }, // 10 s
      { programId: "c", launchMs: 7_000, outcome: "unfinished" },
    ],
    endMs: 30_000,
  };
  const meta = {
    router: "tr",
    concurrency: 2,
    workload: "w",
    seed: 1,
    timeScale: 1,
    warmupMs: 5000,
    durationMs: 25_000,
    programs: 4,
  };
  const html = renderHtmlReport([{ report: buildRunReport(meta, records), records }], "t");
  const data = JSON.parse(/const D = (.*);\n/.exec(html)?.[1] ?? "null") as {
    completion: { x: number[]; y: number[][] };
  };
  assert.equal(data.completion.x[0], 10, "the shortest is b's 10 s");
  assert.equal(data.completion.x.at(-1), 20, "the longest is a's 20 s");
  const ys = data.completion.y[0] ?? [];
  assert.equal(ys[0], 0.5, "one of the two timed programs at the shortest");
  assert.equal(ys.at(-1), 1);
  assert.ok(html.includes('<div id="completion">'));
  // The table: 2 completed, p50 15 s, max 20 s, and no makespan while c is unfinished.
  assert.match(html, /<th>batch makespan \(s\)<\/th>/);
  assert.match(html, /<td class="num">2<\/td><td class="num">15<\/td>/);
  assert.match(html, /<td class="num">20<\/td><td class="num">–<\/td><\/tr>/);
});
