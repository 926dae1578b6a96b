import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type EngineSpeedResult,
  engineSpeedLines,
  runEngineSpeed,
} from "../../../src/bench/scenarios/engine-speed.ts";

/** A few simulated seconds of two agents: enough for turns to finish, quick to run. */
const tiny = { agents: 2, hours: 0.001, profile: "llama-3.1-8b-h100", seed: 1 };

/** The figures virtual time fixes; the rest are measured on the wall clock. */
function virtual(r: EngineSpeedResult) {
  const { wallSeconds, simulatedSecondsPerWallSecond, stepsPerWallSecond, ...rest } = r;
  return rest;
}

describe("bench:engine's run", () => {
  it("runs the agents' turns on the engine for the simulated span", () => {
    const r = runEngineSpeed(tiny);
    assert.equal(r.simulatedSeconds, 3.6);
    assert.equal(r.agents, 2);
    assert.ok(r.turnsCompleted > 0, `got ${r.turnsCompleted} turns, want some in 3.6 s`);
    assert.ok(r.steps > r.turnsCompleted, "every turn takes engine steps");
    assert.ok(r.promptTokens > 200 * r.turnsCompleted, "each prompt holds the shared 200 tokens");
    assert.ok(r.busyFraction > 0 && r.busyFraction <= 1, `busy ${r.busyFraction}`);
    // Every turn after an agent's first resends its conversation, so the prefix cache hits.
    assert.ok(r.prefixHitRate > 0 && r.prefixHitRate <= 1, `prefix hits ${r.prefixHitRate}`);
  });

  it("gives the same virtual figures for the same seed, other figures for another", () => {
    const a = virtual(runEngineSpeed(tiny));
    assert.deepEqual(virtual(runEngineSpeed(tiny)), a, "the run must be deterministic");
    assert.notDeepEqual(virtual(runEngineSpeed({ ...tiny, seed: 2 })), a, "the seed is unused");
  });

  it("prints one line per figure, names in one column, in the result's order", () => {
    const r = runEngineSpeed(tiny);
    const lines = engineSpeedLines(r);
    assert.equal(lines.length, Object.keys(r).length);
    assert.equal(lines[0], `${"profile".padEnd(31)} llama-3.1-8b-h100`);
    assert.equal(lines[1], `${"agents".padEnd(31)} 2`);
    // Each value starts in the same column, after its name padded to 31.
    for (const [i, [name, value]] of Object.entries(r).entries())
      assert.equal(lines[i], `${name}${" ".repeat(32 - name.length)}${value}`);
  });
});
