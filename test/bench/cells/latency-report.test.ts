import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { addedP50, latencyLines } from "../../../src/bench/cells/latency-report.ts";
import { fixtureRun, latencyResult } from "./fixture.ts";

describe("latencyLines", () => {
  const base = fixtureRun();
  const timed = { ...base.hapRequests[0], program: "latency-3", startMs: 7550, tr: 1, ta: 2 };
  const run = fixtureRun({ hapRequests: [...base.hapRequests, timed] });

  it("each body size direct and through HAProxy, what HAProxy adds, its timers and its CPU", () => {
    const lines = latencyLines(run);
    assert.match(lines[1], /program latency-3, which the hash gives cell-a/);
    const table = lines[2].split("\n");
    assert.match(table[2], /^small \(154 B\), direct to cell-a\s+3\s+1\.00\s+1\.00\s*$/);
    assert.match(
      table[3],
      /^small \(154 B\), through HAProxy\s+3\s+1\.20\s+1\.20\s+0\.200\s+0\.500$/,
    );
    assert.match(
      table[5],
      /^large \(200 KiB\), through HAProxy\s+1\s+3\.00\s+3\.00\s+1\.000\s+0\.500$/,
    );
    assert.equal(lines.length, 5, "no line of failed latency requests");
    assert.equal(
      lines[3],
      "HAProxy's own timers, p50 ms (1 ms resolution): small TR 0 / Tw 0 / Tc 0 / Tr 1 / Ta 2; large TR - / Tw - / Tc - / Tr - / Ta -",
    );
    // 0.04 s of HAProxy's CPU over the load, for the 14 requests it logged in it.
    assert.equal(
      lines[4],
      "HAProxy CPU under load: 0.04 s for 14 requests (program releases included) = 2.857 ms per request",
    );
  });

  it("says how many latency requests were answered with another status", () => {
    const failing = { ...latencyResult([1], [1]), failed: 2 };
    const lines = latencyLines(fixtureRun({ latency: { ...run.latency, large: failing } }));
    assert.ok(lines.includes("latency requests answered with another status than 200: 2"));
  });

  it("what HAProxy adds is the difference of the two medians; NaN with nothing measured", () => {
    assert.ok(Math.abs(addedP50(latencyResult([1, 2, 9], [2, 3, 3])) - 1) < 1e-12);
    assert.ok(Number.isNaN(addedP50(latencyResult([], []))));
  });
});
