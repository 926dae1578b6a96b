import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SimulatedEngine } from "../../src/engine/engine.ts";
import { request, runToIdle, smallEngine, tokens } from "./engine-helpers.ts";

// vLLM V1 with `--scheduling-policy priority`, as its scheduler's source has it. Hand-worked
// cache: 4 usable blocks of 16 tokens (numGpuBlocks 5, block 0 is null).
const VLLM = { priorityScheduling: { rules: "vllm" } } as const;

const waitingIds = (e: SimulatedEngine) => e.inspect().waiting.map((v) => v.id);
const runningIds = (e: SimulatedEngine) => e.inspect().running.map((v) => v.id);

/**
 * x (priority 5, 20 tokens: 2 blocks) runs alone, then y (priority 0, 32 tokens: 2 blocks)
 * joins and fills the cache; y's first decode needs a third block. Returns when that decode
 * is next.
 */
function xThenY(engine: SimulatedEngine): number {
  engine.add(request("x", tokens(20, 100), { maxTokens: 10, priority: 5 }));
  let now = engine.step(0)!.duration;
  engine.add(request("y", tokens(32, 200), { maxTokens: 10, priority: 0, arrivalTime: now }));
  const r = engine.step(now)!;
  now += r.duration;
  assert.deepEqual(runningIds(engine), ["x", "y"], "x admitted first, y after it");
  assert.equal(engine.inspect().numFreeBlocks, 0, "x and y fill the cache");
  return now;
}

describe("vLLM priority scheduling: the waiting queue", () => {
  it("orders waiting requests by (priority, arrival), lower first, ties as taken in", () => {
    const engine = smallEngine({ ...VLLM, maxNumSeqs: 1 });
    engine.add(request("a", tokens(8, 100), { priority: 5, arrivalTime: 0 }));
    engine.add(request("b", tokens(8, 200), { priority: 1, arrivalTime: 1 }));
    engine.add(request("c", tokens(8, 300), { priority: 1, arrivalTime: 0.5 }));
    engine.add(request("d", tokens(8, 400), { priority: -2, arrivalTime: 2 }));
    engine.add(request("e", tokens(8, 500), { priority: 1, arrivalTime: 0.5 }));
    engine.add(request("f", tokens(8, 600), { arrivalTime: 3 }));
    assert.deepEqual(waitingIds(engine), ["d", "f", "c", "e", "b", "a"], "no priority is 0");
    engine.step(0);
    assert.deepEqual(runningIds(engine), ["d"], "the lowest value is admitted first");
  });

  it("is first come, first served without priority scheduling, whatever the field says", () => {
    const engine = smallEngine();
    engine.add(request("a", tokens(8, 100), { priority: 5 }));
    engine.add(request("b", tokens(8, 200), { priority: -5 }));
    assert.deepEqual(waitingIds(engine), ["a", "b"]);
  });
});

describe("vLLM priority scheduling: preemption", () => {
  it("preempts the running request of the largest (priority, arrival), not the last admitted", () => {
    const engine = smallEngine(VLLM);
    // a (priority 1) needs a third block at its first decode; b (priority 0) needs none.
    engine.add(request("a", tokens(32, 100), { maxTokens: 10, priority: 1 }));
    engine.add(request("b", tokens(20, 200), { maxTokens: 10, priority: 0 }));
    const first = engine.step(0)!;
    engine.step(first.duration);
    assert.equal(engine.stats().numPreemptions, 1);
    assert.deepEqual(runningIds(engine), ["b"], "first come, first served would keep a");
    assert.deepEqual(waitingIds(engine), ["a"]);
    assert.equal(engine.inspect().waiting[0].numComputed, 0);
  });

  it("takes a victim scheduled earlier in the step back out of it", () => {
    const engine = smallEngine(VLLM);
    const now = xThenY(engine);
    const r = engine.step(now)!;
    assert.equal(engine.stats().numPreemptions, 1);
    assert.deepEqual(
      r.outputs.map((o) => o.id),
      ["y"],
      "x had its decode in the step, then lost it",
    );
    assert.equal(r.scheduledTokens, 1, "x's token went back to the budget, y's decode ran");
    assert.deepEqual(runningIds(engine), ["y"]);
    const x = engine.inspect().waiting.find((v) => v.id === "x")!;
    assert.deepEqual([x.numComputed, x.numBlocks], [0, 0]);
  });

  it("under first come, first served the same step preempts y itself instead", () => {
    const engine = smallEngine();
    const now = xThenY(engine);
    engine.step(now);
    assert.deepEqual(runningIds(engine), ["x"]);
    assert.deepEqual(waitingIds(engine), ["y"]);
  });

  it("puts the victim back by its key, behind better waiting requests, not at the head", () => {
    const engine = smallEngine(VLLM);
    const now = xThenY(engine);
    // u is better than x, v equal to x but arrived after it; neither fits before the step.
    engine.add(request("u", tokens(40, 300), { priority: 1, arrivalTime: now }));
    engine.add(request("v", tokens(40, 400), { priority: 5, arrivalTime: now }));
    engine.step(now);
    assert.deepEqual(waitingIds(engine), ["u", "x", "v"]);
  });

  it("is passed by an equal-priority request that arrived before it and has not started", () => {
    const engine = smallEngine(VLLM);
    const now = xThenY(engine);
    // w arrived before x (its arrival time was stamped before x's) but reached the engine late.
    engine.add(request("w", tokens(40, 300), { priority: 5, arrivalTime: -1 }));
    engine.step(now);
    assert.deepEqual(waitingIds(engine), ["w", "x"]);
  });

  it("admits nobody in a step that preempted, however good the waiting request", () => {
    const engine = smallEngine(VLLM);
    const now = xThenY(engine);
    engine.add(request("z", tokens(3, 300), { priority: -100, maxTokens: 1, arrivalTime: now }));
    engine.step(now);
    assert.equal(engine.inspect().numFreeBlocks, 1, "x's two blocks freed, y took one");
    assert.deepEqual(waitingIds(engine), ["z", "x"], "z would fit but waits");
  });

  it("never preempts for a waiting request: a better one waits for room", () => {
    const engine = smallEngine(VLLM);
    engine.add(request("low", tokens(56, 100), { maxTokens: 6, priority: 10 }));
    let now = engine.step(0)!.duration;
    engine.add(request("high", tokens(20, 200), { priority: -10, arrivalTime: now }));
    while (runningIds(engine).includes("low")) {
      assert.deepEqual(waitingIds(engine), ["high"]);
      now += engine.step(now)!.duration;
    }
    assert.equal(engine.stats().numPreemptions, 0);
    runToIdle(engine, now);
    assert.equal(engine.stats().requestSuccess.length, 2);
  });

  it("never preempts for a waiting request when max_num_seqs is reached", () => {
    const engine = smallEngine({ ...VLLM, maxNumSeqs: 1 });
    engine.add(request("low", tokens(8, 100), { maxTokens: 4, priority: 10 }));
    const now = engine.step(0)!.duration;
    engine.add(request("high", tokens(8, 200), { priority: -10, arrivalTime: now }));
    engine.step(now);
    assert.deepEqual(runningIds(engine), ["low"]);
    assert.deepEqual(waitingIds(engine), ["high"]);
  });

  it("resumes a victim from its blocks still in the prefix cache", () => {
    const engine = smallEngine(VLLM);
    const now = xThenY(engine);
    runToIdle(engine, now);
    const s = engine.stats();
    assert.equal(s.numPreemptions, 1);
    // x had computed 21 tokens; its first block (16 tokens) stayed cached, so it recomputes 5.
    assert.equal(s.recomputedTokens, 5);
    assert.equal(s.requestSuccess.length, 2);
  });
});
