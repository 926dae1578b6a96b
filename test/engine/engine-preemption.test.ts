import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { request, runToIdle, smallEngine, tokens } from "./engine-helpers.ts";

// Hand-worked cache: 4 usable blocks of 16 tokens (numGpuBlocks 5, block 0 is null).
describe("engine recompute preemption", () => {
  it("preempts the most recently admitted request even when another one needs the block", () => {
    const engine = smallEngine();
    // a: 32 tokens = 2 full blocks, so its first decode needs a 3rd block at once.
    // b: 20 tokens = 2 blocks, needs nothing new for 12 more tokens.
    engine.add(request("a", tokens(32, 100), { maxTokens: 10 }));
    engine.add(request("b", tokens(20, 200), { maxTokens: 10 }));
    const first = engine.step(0)!;
    assert.equal(engine.inspect().numFreeBlocks, 0, "both prompts fill the cache");
    const second = engine.step(first.duration)!;
    const s = engine.stats();
    assert.equal(s.numPreemptions, 1);
    assert.deepEqual(
      engine.inspect().running.map((v) => v.id),
      ["a"],
    );
    assert.deepEqual(
      engine.inspect().waiting.map((v) => v.id),
      ["b"],
      "victim is b, last admitted",
    );
    assert.deepEqual(
      second.outputs.map((o) => o.id),
      ["a"],
    );
    const b = engine.inspect().waiting[0];
    assert.equal(b.numComputed, 0, "victim restarts from zero computed tokens");
    assert.equal(b.numBlocks, 0, "victim's blocks are freed");
  });

  it("puts the victim at the front of the waiting queue, ahead of older waiting requests", () => {
    const engine = smallEngine();
    engine.add(request("a", tokens(32, 100), { maxTokens: 10 }));
    engine.add(request("b", tokens(20, 200), { maxTokens: 10 }));
    engine.step(0);
    engine.add(request("c", tokens(8, 300), { maxTokens: 2 }));
    engine.step(1);
    assert.deepEqual(
      engine.inspect().waiting.map((v) => v.id),
      ["b", "c"],
    );
  });

  it("admits nobody in a step that preempted, although blocks were freed", () => {
    const engine = smallEngine();
    engine.add(request("a", tokens(32, 100), { maxTokens: 10 }));
    engine.add(request("b", tokens(20, 200), { maxTokens: 10 }));
    engine.step(0);
    engine.add(request("tiny", tokens(3, 300), { maxTokens: 1 }));
    const r = engine.step(1)!;
    assert.equal(engine.inspect().numFreeBlocks, 1, "b's two blocks freed, a took one");
    assert.equal(r.numRunning, 1);
    assert.ok(
      engine.inspect().waiting.some((v) => v.id === "tiny"),
      "tiny would fit but waits",
    );
  });

  it("finishes both the preemptor and the victim with their full outputs", () => {
    const engine = smallEngine();
    engine.add(request("a", tokens(32, 100), { maxTokens: 20, ignoreEos: true }));
    engine.add(request("b", tokens(20, 200), { maxTokens: 20, ignoreEos: true }));
    const run = runToIdle(engine);
    const s = engine.stats();
    // a grows to 52 tokens = all 4 blocks, so b resumes only after a finished: one preemption.
    assert.equal(s.numPreemptions, 1);
    assert.equal(run.outputs.get("a")!.length, 20);
    assert.equal(run.outputs.get("b")!.length, 20, "the victim still completes");
    assert.equal(s.requestSuccess.length, 2);
  });

  it("counts recomputed tokens and shows the victim one long inter-token gap", () => {
    const engine = smallEngine();
    engine.add(request("a", tokens(32, 100), { maxTokens: 20 }));
    engine.add(request("b", tokens(20, 200), { maxTokens: 20 }));
    const times: number[] = [];
    const steps: number[] = [];
    runToIdle(engine, 0, (s) => {
      steps.push(s.duration);
      if (s.outputs.some((o) => o.id === "b")) times.push(s.startTime + s.duration);
    });
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    const longest = Math.max(...gaps);
    const maxStep = Math.max(...steps);
    assert.ok(
      longest > 5 * maxStep,
      `longest gap ${longest} should span many steps (max step ${maxStep})`,
    );
    const s = engine.stats();
    // b held 20 prompt tokens + 1 sampled; its first block (tokens 0–15) stayed cached.
    assert.ok(s.recomputedTokens > 0, "re-prefill after preemption is counted");
    assert.ok(s.recomputedTokens <= 21, `recomputed ${s.recomputedTokens} ≤ b's computed tokens`);
  });

  it("keeps the victim's prefix hashes so its resume hits its own cached first block", () => {
    const engine = smallEngine();
    engine.add(request("a", tokens(32, 100), { maxTokens: 12 }));
    engine.add(request("b", tokens(20, 200), { maxTokens: 12 }));
    const run = runToIdle(engine);
    const s = engine.stats();
    assert.equal(s.numPreemptions, 1);
    // b computed 20 tokens before preemption, its block 0 (16 tokens) survived in the free
    // queue, so it recomputes only tokens 16..20: 4 recomputed.
    assert.equal(s.recomputedTokens, 4);
    assert.equal(run.outputs.get("b")!.length, 12);
    assert.equal(
      run.outputs.get("b")![0].numCachedTokens,
      0,
      "cached_tokens is fixed at first admission",
    );
  });
});
