import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { buildWorld, HUGE_CAPACITY } from "../../../src/bench/overhead/tick-world.ts";

describe("bench:tick's world", () => {
  it("tracks every program, placed on the backends, a share with a request in flight", () => {
    const w = buildWorld({ programs: 80, backends: 4, seed: 1 });
    const s = w.scheduler.snapshot();
    assert.equal(s.programs.length, 80);
    assert.deepEqual(
      s.backends.map((b) => b.id),
      w.ids,
    );
    assert.equal(w.ids.length, 4);
    const reasoning = s.programs.filter((p) => p.inFlight > 0).length;
    assert.ok(
      reasoning > 0 && reasoning < 40,
      `${reasoning} of 80 in flight, want about a quarter`,
    );
    for (const p of s.programs) assert.ok(p.totalTokens >= 2_000 && p.totalTokens < 30_000 + 1_000);
  });

  it("is the same world for the same seed, another for another", () => {
    const tokens = (seed: number) =>
      buildWorld({ programs: 30, backends: 2, seed })
        .scheduler.snapshot()
        .programs.map((p) => [p.id, p.totalTokens, p.inFlight]);
    assert.deepEqual(tokens(7), tokens(7));
    assert.notDeepEqual(tokens(7), tokens(8));
  });

  it("a tick moves the world's clock on and hands every backend its capacity", () => {
    const w = buildWorld({ programs: 20, backends: 3, seed: 2 });
    const asked: string[] = [];
    const before = w.now;
    w.tick((id) => {
      asked.push(id);
      return HUGE_CAPACITY;
    });
    assert.deepEqual(asked, w.ids);
    assert.equal(w.now, before + 5_000);
  });
});
