import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { ErrorRecord, StepRecord } from "../../../src/bench/records.ts";
import {
  type BackendKillResult,
  backendKillLines,
  killOutcome,
  metricSum,
} from "../../../src/bench/scenarios/backend-kill-report.ts";

const step = (endMs: number): StepRecord => ({
  programId: "p",
  stepIndex: 0,
  startMs: 0,
  endMs,
  promptTokens: 1,
  cachedTokens: null,
  completionTokens: 1,
  pausedMs: 0,
});
const error = (kind: string): ErrorRecord => ({ programId: "p", stepIndex: 0, atMs: 0, kind });

describe("bench:backend-kill's outcome", () => {
  it("splits the steps at the kill and the failures into lost and cut", () => {
    const o = killOutcome(
      {
        steps: [step(100), step(999), step(1000), step(5000)],
        errors: [error("http_502"), error("stream_error"), error("http_502"), error("ECONNRESET")],
      },
      1000,
    );
    assert.deepEqual(o, {
      before: 2,
      after: 2,
      lost: 3,
      cut: 1,
      kinds: [
        ["http_502", 2],
        ["stream_error", 1],
        ["ECONNRESET", 1],
      ],
    });
  });

  it("accounts for every step and every failure, wherever the kill falls", () => {
    const kinds = fc.constantFrom("http_502", "stream_error", "ECONNRESET");
    fc.assert(
      fc.property(fc.array(fc.nat(10_000)), fc.array(kinds), fc.nat(10_000), (ends, errs, at) => {
        const o = killOutcome({ steps: ends.map(step), errors: errs.map(error) }, at);
        assert.equal(o.before + o.after, ends.length);
        assert.equal(o.lost + o.cut, errs.length);
        assert.equal(
          o.kinds.reduce((a, [, n]) => a + n, 0),
          errs.length,
        );
      }),
    );
  });

  it("sums a counter's series in a Prometheus exposition, none present as 0", () => {
    const text = [
      "# HELP maitred_upstream_retries_total Retries.",
      "# TYPE maitred_upstream_retries_total counter",
      'maitred_upstream_retries_total{backend="http://a"} 2',
      'maitred_upstream_retries_total{backend="http://b"} 3',
      "maitred_requests_total 40",
    ].join("\n");
    assert.equal(metricSum(text, "maitred_upstream_retries_total"), 5);
    assert.equal(metricSum("maitred_requests_total 40\n", "maitred_upstream_retries_total"), 0);
  });
});

describe("bench:backend-kill's printing", () => {
  const r: BackendKillResult = {
    before: 120,
    after: 300,
    lost: 0,
    cut: 2,
    kinds: [["stream_error", 2]],
    numBackends: 4,
    timeScale: 5,
    numGpuBlocks: 4000,
    concurrency: 32,
    workload: "deepseek",
    streamShare: 0.5,
    control: false,
    killedAtMs: 20_012,
    durationMs: 60_000,
    retries: 7,
    unhealthyAfterMs: 812.4,
  };

  it("prints the run, its measures as a table, and the failures by kind", () => {
    assert.deepEqual(backendKillLines(r), [
      "4 backends (sim, time scale 5, 4000 blocks), 32 programs of deepseek, 50 % streamed; backend 2 killed (SIGKILL) at 20.0 s of 60 s; no client retries",
      "",
      [
        "| measure | value |",
        "| --- | ---: |",
        "| steps answered before the kill | 120 |",
        "| steps answered after the kill | 300 |",
        "| requests lost (failed before any byte reached the client) | 0 |",
        "| streams cut mid-answer (bytes already out) | 2 |",
        "| router retries on another backend | 7 |",
        "| killed backend unhealthy after | 812 ms |",
      ].join("\n"),
      "\nfailures by kind: stream_error 2",
    ]);
  });

  it("says a control run split rather than killed, and leaves out kinds when none failed", () => {
    const lines = backendKillLines({ ...r, control: true, kinds: [], unhealthyAfterMs: null });
    assert.match(lines[0], /; control run, nothing killed; split at 20\.0 s of 60 s;/);
    assert.match(lines[2], /\| killed backend unhealthy after \| not within 30 s \|/);
    assert.equal(lines.length, 3);
  });
});
