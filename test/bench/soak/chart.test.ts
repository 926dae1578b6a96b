import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type Sample, soakChart } from "../../../src/bench/soak/chart.ts";

const sample = (t_s: number, cpu_s: number | null, lag: number | null): Sample => ({
  t_s,
  rss_mb: 120,
  cpu_s,
  heap_mb: 30,
  lag_p99_ms: lag,
  live_programs: 10,
  programs_seen: 10,
  requests: 100,
  cells: [],
});

describe("the soak's chart", () => {
  it("draws memory above CPU and delay, each a line per series, in one document", () => {
    const svg = soakChart([sample(0, 0, 12), sample(60, 30, 40), sample(120, null, null)], 10);
    assert.equal((svg.match(/<polyline /g) ?? []).length, 4, "RSS, heap, CPU, delay");
    assert.ok(svg.includes('<svg y="0" ') && svg.includes('<svg y="340" '));
  });

  it("CPU is the share of one CPU between samples; a missing figure reads 0", () => {
    const svg = soakChart([sample(0, 0, 10), sample(60, 30, 10), sample(120, null, 10)], 10);
    // 30 CPU seconds over 60 s is 50 %: the series' top tick is 60 (steps of 20).
    const bottom = svg.slice(svg.indexOf('<svg y="340" '));
    assert.ok(bottom.includes(">60</text>"), bottom);
    assert.ok(!bottom.includes(">80</text>"));
  });
});
