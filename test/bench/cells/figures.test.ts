import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cellsFigures } from "../../../src/bench/cells/figures.ts";
import { fixtureRun } from "./fixture.ts";

describe("cellsFigures", () => {
  const f = cellsFigures(fixtureRun());

  it("reads affinity over each calm span, and the programs that moved at the kill and back", () => {
    assert.deepEqual(
      [f.affinity.stable, f.affinity.dead, f.affinity.back].map((a) => [a.programs, a.below]),
      [
        [4, 0],
        [3, 0],
        [2, 0],
      ],
    );
    assert.equal(f.atKill.both, 3);
    assert.deepEqual(f.atKill.moved, [{ program: "cells-p3", from: "cell-b", to: "cell-c" }]);
    assert.equal(f.atBack.both, 2);
    assert.deepEqual(f.atBack.moved, [{ program: "cells-p3", from: "cell-c", to: "cell-b" }]);
  });

  it("keeps only the closed loop's requests and reads steps/min over the stable span", () => {
    const g = cellsFigures(
      fixtureRun({
        hapRequests: [
          ...fixtureRun().hapRequests,
          { ...fixtureRun().hapRequests[0], program: "latency-3" },
        ],
      }),
    );
    assert.equal(g.chat.length, f.chat.length);
    assert.equal(f.stableStepsPerMin, 150);
    assert.equal(f.ringOf("cells-p2"), "cell-c");
  });
});
