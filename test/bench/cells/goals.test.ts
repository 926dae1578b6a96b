import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cellsFigures } from "../../../src/bench/cells/figures.ts";
import { cellsGoals, goalLines, goalsMet } from "../../../src/bench/cells/goals.ts";
import { fixtureRun, latencyResult } from "./fixture.ts";

describe("cellsGoals", () => {
  const run = fixtureRun();
  const f = cellsFigures(run);

  it("met where measured and within bounds; the ratio not measured without the lone pass", () => {
    const goals = cellsGoals(run, f, null);
    assert.deepEqual(
      goals.map((g) => g.met),
      [true, true, true, null, true],
    );
    assert.equal(goals[1].measured, "1 lost (1 in flight on cell-b at the kill, 0 other), 0 hung");
    assert.equal(goals[2].measured, "p50 600 ms, max 600 ms, bound 1100 ms");
    assert.equal(goals[3].measured, "not measured");
    assert.equal(goals[4].measured, "0.200 ms (~200 KB body: 1.000 ms)");
    assert.equal(goalsMet(goals), true, "a goal not measured does not fail the run");
  });

  it("a ratio below 0.95 or too much latency added is not met, and fails the run", () => {
    const slow = fixtureRun({
      latency: { ...run.latency, small: latencyResult([1], [1.5]) },
    });
    const goals = cellsGoals(slow, f, 200);
    assert.equal(goals[3].measured, "0.750");
    assert.equal(goals[3].met, false);
    assert.equal(goals[4].met, false);
    assert.equal(goalsMet(goals), false);
    assert.equal(cellsGoals(run, f, 150)[3].met, true, "150 ÷ 150 = 1");
  });

  it("a failure elsewhere than the killed cell, or a program that moved while calm, misses", () => {
    const lostElse = { ...f.kill, lostElse: [run.attempts[0]] };
    const below = { ...f.affinity, dead: { ...f.affinity.dead, below: 2 } };
    const goals = cellsGoals(run, { ...f, kill: lostElse, affinity: below }, null);
    assert.equal(goals[0].met, false);
    assert.match(goals[0].measured, /, 2 programs below 100 %$/);
    assert.equal(goals[1].met, false);
  });

  it("the table says met, not met or n/a", () => {
    const table = goalLines(cellsGoals(run, f, 200))[2];
    assert.match(
      table,
      /steps\/min through HAProxy \(stable\) ÷ three lone routers ≥ 0\.95\s+0\.750\s+not met/,
    );
    assert.match(table, /p50 latency HAProxy adds ≤ 0\.3 ms \(small body\)\s+0\.200 ms .*\s+met/);
  });
});
