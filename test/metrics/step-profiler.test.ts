import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import {
  CSV_COLUMNS,
  createStepProfiler,
  type StepTiming,
} from "../../src/metrics/step-profiler.ts";
import { silentLogger } from "../../src/util/logger.ts";

const step = (over: Partial<StepTiming>): StepTiming => ({
  programId: "p,1",
  arrivedAt: 0,
  dispatchedAt: 0,
  firstTokenAt: null,
  lastTokenAt: null,
  endedAt: 0,
  pausedMs: 0,
  streamed: true,
  usage: null,
  outcome: "ok",
  ...over,
});

test("steps become CSV rows and per-program averages; tool time runs from the previous end", async () => {
  const dir = mkdtempSync(join(tmpdir(), "maitred-prof-"));
  const prof = createStepProfiler({ dir, logger: silentLogger });
  prof.record(
    step({
      arrivedAt: 1000,
      dispatchedAt: 1500,
      firstTokenAt: 1700,
      lastTokenAt: 2700,
      endedAt: 2800,
      pausedMs: 500,
      usage: { promptTokens: 100, completionTokens: 20, totalTokens: 120, cachedTokens: 50 },
    }),
  );
  prof.record(
    step({
      arrivedAt: 4800,
      dispatchedAt: 4800,
      firstTokenAt: 5000,
      lastTokenAt: 5000,
      endedAt: 5100,
    }),
  );
  const p = prof.profile("p,1");
  assert.ok(p);
  assert.equal(p.step_count, 2);
  assert.equal(
    p.total_tool_call_s,
    2,
    "second arrival 4.8 s − first end 2.8 s; the first step has none",
  );
  assert.equal(p.avg_pause_s, 0.25);
  assert.equal(p.avg_prefill_s, 0.2);
  assert.equal(p.avg_decode_s, 0.5);
  assert.equal(p.avg_kv_hit_rate, 0.25);
  assert.equal(p.cached_tokens, 50);
  assert.deepEqual(Object.keys(prof.profiles()), ["p,1"]);

  await prof.close();
  const lines = readFileSync(prof.csvPath, "utf8").trim().split("\n");
  assert.equal(lines[0], CSV_COLUMNS.join(","));
  assert.equal(lines.length, 3);
  assert.ok(lines[1].startsWith('"p,1",1,0.2,1,0.5,0,0.5,2.8,100,20,50,0.7,ok'), `got ${lines[1]}`);
});

test("reopening the same directory appends rows without a second header", async () => {
  const dir = mkdtempSync(join(tmpdir(), "maitred-prof-"));
  for (let i = 0; i < 2; i++) {
    const prof = createStepProfiler({ dir, logger: silentLogger });
    prof.record(step({ programId: `p${i}` }));
    await prof.close();
  }
  const lines = readFileSync(join(dir, "step_profiles.csv"), "utf8").trim().split("\n");
  assert.equal(lines.filter((l) => l.startsWith("program_id")).length, 1);
  assert.equal(lines.length, 3);
});

test("a non-streamed step counts its service time as decode", () => {
  const dir = mkdtempSync(join(tmpdir(), "maitred-prof-"));
  const prof = createStepProfiler({ dir, logger: silentLogger });
  prof.record(step({ streamed: false, dispatchedAt: 100, endedAt: 400 }));
  assert.equal(prof.profile("p,1")?.avg_decode_s, 0.3);
  void prof.close();
});
