import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cellsFigures } from "../../../src/bench/cells/figures.ts";
import type { LoneRun } from "../../../src/bench/cells/lone-pass.ts";
import { loneLines, loneStepsPerMin } from "../../../src/bench/cells/lone-report.ts";
import type { RunRecords } from "../../../src/bench/records.ts";
import { fixtureRun } from "./fixture.ts";

/** A lone router's records: one step of `programId` ending at each of `ends` (ms from its t0). */
const records = (programId: string, ends: number[]): RunRecords => ({
  steps: ends.map((endMs, stepIndex) => ({
    programId,
    stepIndex,
    startMs: endMs - 300,
    endMs,
    promptTokens: 1,
    cachedTokens: 0,
    completionTokens: 1,
    pausedMs: 0,
  })),
  errors: [],
  programs: [],
  endMs: 3000,
});

// Measured from 1 s to 3 s after the pass began (at 10 s): a step at 0.5 s is the warmup's.
const LONE: LoneRun = {
  shares: [1.2, 2.1, 0.7],
  concurrency: [1, 2, 1],
  t0: 10_000,
  window: { from: 11_000, to: 13_000 },
  records: [
    records("cells-p0", [500, 1500, 2000, 2500, 2900]),
    records("cells-p1", [1200, 1800]),
    records("cells-p2", []),
  ],
  cpu: { machine: 80, backends: 60, cells: 30, haproxy: 0, driver: 10, other: 60 },
  failed: 0,
};

describe("the lone-router report", () => {
  const run = fixtureRun();
  const f = cellsFigures(run);

  it("sums the lone routers' steps/min over their measured window", () => {
    assert.equal(loneStepsPerMin(LONE), 120 + 60 + 0);
  });

  it("a row per cell lone and through HAProxy, then the ratio", () => {
    const lines = loneLines(run, f, LONE);
    assert.match(lines[0], /\(cell-a 1\.2, cell-b 2\.1, cell-c 0\.7 → 1 \+ 2 \+ 1 = 4\)/);
    const table = lines[1].split("\n");
    assert.match(table[2], /^cell-a\s+1\s+120\.0\s+60\.0\s+300\s+100\s+1 of 1$/);
    assert.match(table[3], /^cell-b\s+2\s+60\.0\s+60\.0\s+300\s+150\s+1 of 2$/);
    assert.match(table[4], /^cell-c\s+1\s+0\.0\s+30\.0\s+-\s+100\s+0 of 1$/);
    assert.match(
      lines[2],
      /6 backends 60\.0, 3 routers 30\.0, driver 10\.0, other 60\.0; machine busy 80 %$/,
    );
    assert.equal(
      lines[3],
      "three lone routers: 180.0 steps/min summed (0 failed requests); through HAProxy while stable: 150.0 steps/min; ratio 0.833",
    );
  });
});
