import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isChat, runWindows, stepsPerMin } from "../../../src/bench/cells/windows.ts";
import { fixtureRun } from "./fixture.ts";

describe("runWindows", () => {
  it("the calm spans start from when HAProxy logged the victim DOWN and UP", () => {
    const w = runWindows(fixtureRun());
    assert.deepEqual(
      w.phases.map((p) => [p.name, p.from, p.to]),
      [
        ["warmup", 0, 1000],
        ["stable", 1000, 3000],
        ["dead", 3000, 5000],
        ["back", 5000, 7000],
      ],
    );
    assert.equal(w.downAt, 3400);
    assert.equal(w.upAt, 6000);
    assert.deepEqual(w.calm, {
      stable: { from: 1000, to: 3000 },
      dead: { from: 3400, to: 5000 },
      back: { from: 6000, to: 7000 },
    });
  });

  it("without a change logged after the kill or the restart, assumes three check intervals", () => {
    const w = runWindows(
      fixtureRun({
        hapEvents: [
          { atMs: 2000, server: "cell-b", state: "DOWN" }, // before the kill: not this one
          { atMs: 3500, server: "cell-a", state: "DOWN" }, // another cell
        ],
      }),
    );
    assert.equal(w.downEv, undefined);
    assert.equal(w.upEv, undefined);
    assert.equal(w.downAt, 3000 + 3000, "kill + 3 × 1 s");
    assert.equal(w.upAt, 5500 + 3000, "ready + 3 × 1 s");
  });
});

describe("isChat and stepsPerMin", () => {
  it("counts only the closed loop's chat completions, and steps by when they ended", () => {
    const run = fixtureRun();
    const [r] = run.hapRequests;
    assert.equal(isChat(r), true);
    assert.equal(isChat({ ...r, method: "GET", path: "/health?bench-clock=before-0" }), false);
    assert.equal(isChat({ ...r, program: "latency-3" }), false);
    assert.equal(isChat({ ...r, program: null }), false);
    // Five steps end in [1 s, 3 s): 150 a minute.
    assert.equal(stepsPerMin(run.records, run.t0, { from: 1000, to: 3000 }), 150);
  });
});
