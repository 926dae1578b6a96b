import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { byProgram } from "../../../src/bench/cells/cells-analysis.ts";
import { failover } from "../../../src/bench/cells/failover.ts";
import { fixtureRun, RING } from "./fixture.ts";

describe("failover", () => {
  const run = fixtureRun();
  const index = byProgram(run.hapRequests);
  const stable = { from: 1000, to: 3000 };

  it("sorts the victim's programs by fate and times those answered elsewhere from the kill", () => {
    const f = failover(run, stable, index, (id) => RING.get(id));
    // p1 lost its request in flight, p3 and p5 went to cell-c, p4 sent nothing more.
    assert.equal(f.victims, 4);
    assert.deepEqual(f.fate, { elsewhere: 2, lost: 1, quiet: 1, other: 0 });
    assert.deepEqual(f.toSent, [500, 450], "p3 then p5: HAProxy sent them at 3.5 s and 3.45 s");
    assert.deepEqual(f.toAnswer, [700, 600]);
    assert.deepEqual(f.fromAttempt, [600, 600], "p3 from its request at 3.1 s, p5 from the kill");
    assert.deepEqual(f.heldThere, [50, 0]);
    assert.equal(f.stepMs, 100, "the median step while stable");
    assert.equal(f.bound, 1100, "one check interval + one step");
  });

  it("a program the hash gives another cell is not the victim's", () => {
    const f = failover(run, stable, index, () => "cell-a");
    assert.equal(f.victims, 0);
    assert.deepEqual(f.toSent, []);
  });
});
