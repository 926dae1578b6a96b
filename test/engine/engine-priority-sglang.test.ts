import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SimulatedEngine } from "../../src/engine/engine.ts";
import type { EngineConfigOverrides } from "../../src/engine/timing.ts";
import type { PriorityScheduling } from "../../src/engine/types.ts";
import { hostTier, request, runToIdle, smallEngine, tokens } from "./engine-helpers.ts";

// SGLang with `--enable-priority-scheduling`, as its scheduler's source has it. Hand-worked
// cache: 4 usable blocks of 16 tokens (numGpuBlocks 5, block 0 is null).
const sglang = (p: Omit<PriorityScheduling, "rules"> = {}): EngineConfigOverrides => ({
  priorityScheduling: { rules: "sglang", ...p },
});

const waitingIds = (e: SimulatedEngine) => e.inspect().waiting.map((v) => v.id);
const runningIds = (e: SimulatedEngine) => e.inspect().running.map((v) => v.id);

/** `id` runs alone with `tokens` prompt tokens; returns when its next step starts. */
function running(engine: SimulatedEngine, id: string, n: number, priority?: number, at = 0) {
  engine.add(
    request(id, tokens(n, 100 * (id.charCodeAt(0) + 1)), {
      maxTokens: 4,
      priority,
      arrivalTime: at,
    }),
  );
  return at + engine.step(at)!.duration;
}

describe("SGLang priority scheduling: the waiting queue", () => {
  it("serves higher values first, and a request without a priority last", () => {
    const engine = smallEngine({ ...sglang(), maxNumSeqs: 1 });
    engine.add(request("a", tokens(8, 100), { priority: 1, arrivalTime: 0 }));
    engine.add(request("b", tokens(8, 200), { priority: 5, arrivalTime: 1 }));
    engine.add(request("c", tokens(8, 300), { arrivalTime: -1 }));
    engine.add(request("d", tokens(8, 400), { priority: 5, arrivalTime: 2 }));
    engine.add(request("e", tokens(8, 500), { priority: -3, arrivalTime: 3 }));
    assert.deepEqual(waitingIds(engine), ["b", "d", "a", "e", "c"]);
  });

  it("serves lower values first with --schedule-low-priority-values-first", () => {
    const engine = smallEngine(sglang({ lowValuesFirst: true }));
    engine.add(request("a", tokens(8, 100), { priority: 1 }));
    engine.add(request("b", tokens(8, 200), { priority: 5 }));
    engine.add(request("c", tokens(8, 300), { arrivalTime: -1 }));
    engine.add(request("e", tokens(8, 500), { priority: -3 }));
    assert.deepEqual(waitingIds(engine), ["e", "a", "b", "c"]);
  });
});

describe("SGLang priority scheduling: a waiting request preempts", () => {
  it("running requests worse by more than the threshold, and is admitted in the same step", () => {
    const engine = smallEngine(sglang());
    const now = running(engine, "x", 60, 0);
    engine.add(request("y", tokens(10, 900), { priority: 20, arrivalTime: now }));
    const r = engine.step(now)!;
    assert.equal(engine.stats().numPreemptions, 1);
    assert.deepEqual(runningIds(engine), ["y"]);
    assert.deepEqual(waitingIds(engine), ["x"]);
    assert.deepEqual(
      r.outputs.map((o) => o.id),
      ["y"],
      "x's decode left the step with it",
    );
  });

  for (const [threshold, preempts] of [
    [undefined, false],
    [9, true],
  ] as const) {
    it(`${preempts ? "" : "not "}for a gap of 10 with threshold ${threshold ?? "10 (default)"}`, () => {
      const engine = smallEngine(sglang({ preemptionThreshold: threshold }));
      const now = running(engine, "x", 60, 0);
      engine.add(request("y", tokens(10, 900), { priority: 10, arrivalTime: now }));
      engine.step(now);
      assert.equal(engine.stats().numPreemptions, preempts ? 1 : 0);
      assert.deepEqual(runningIds(engine), [preempts ? "y" : "x"]);
    });
  }

  it("a running request without a priority, the lowest there is", () => {
    const engine = smallEngine(sglang());
    const now = running(engine, "x", 60);
    engine.add(request("y", tokens(10, 900), { priority: -1000, arrivalTime: now }));
    engine.step(now);
    assert.deepEqual(runningIds(engine), ["y"]);
  });

  it("never between two requests without a priority", () => {
    const engine = smallEngine(sglang({ preemptionThreshold: 0 }));
    const now = running(engine, "x", 60);
    engine.add(request("y", tokens(10, 900), { arrivalTime: now }));
    engine.step(now);
    assert.deepEqual(runningIds(engine), ["x"]);
  });

  it("with --schedule-low-priority-values-first, requests of values higher by the gap", () => {
    const engine = smallEngine(sglang({ lowValuesFirst: true }));
    const now = running(engine, "x", 60, 20);
    engine.add(request("y", tokens(10, 900), { priority: 0, arrivalTime: now }));
    engine.step(now);
    assert.deepEqual(runningIds(engine), ["y"]);
  });

  it("only when the preemptible requests free enough, worst first", () => {
    for (const [zPriority, expected] of [
      [15, ["z", "x"]],
      [1, ["y"]],
    ] as const) {
      const engine = smallEngine(sglang());
      // x and z hold 2 blocks each; y needs 3. Only requests worse than y by more than 10 count.
      engine.add(request("x", tokens(20, 100), { maxTokens: 8, priority: 0 }));
      engine.add(request("z", tokens(20, 200), { maxTokens: 8, priority: zPriority }));
      const now = engine.step(0)!.duration;
      engine.add(request("y", tokens(40, 300), { priority: 20, arrivalTime: now }));
      engine.step(now);
      assert.deepEqual(runningIds(engine), expected, `z at priority ${zPriority}`);
      // Not enough: nobody is preempted. Enough: both are, x (the worst) and z.
      assert.equal(engine.stats().numPreemptions, expected.length === 1 ? 2 : 0);
    }
  });

  it("counts no block of the waiting request's own prefix as room its victims free", () => {
    // 8 usable blocks. z holds 4; x holds 3, two of them the 32 tokens y begins with. y needs
    // 3 blocks more than its 2 hits, with 1 free. x, the worst, is the first victim: it frees
    // 3 blocks, but 2 are y's hits and stay cached for it, so x alone is not enough. Preempting
    // x alone would recompute it for nothing; with z too, y is admitted in the same step.
    const engine = smallEngine({ numGpuBlocks: 9, maxModelLen: 128, ...sglang() });
    const shared = tokens(32, 500);
    engine.add(request("z", tokens(60, 900), { maxTokens: 8, priority: 5 }));
    engine.add(request("x", [...shared, ...tokens(8, 700)], { maxTokens: 8, priority: 0 }));
    const now = engine.step(0)!.duration;
    assert.deepEqual(runningIds(engine), ["z", "x"]);
    engine.add(request("y", [...shared, ...tokens(40, 800)], { priority: 20, arrivalTime: now }));
    engine.step(now);
    assert.deepEqual(runningIds(engine), ["y"], "both preempted, y admitted in the same step");
    assert.equal(engine.stats().numPreemptions, 2);
  });

  it("puts the victim back at the moment it was preempted, behind its equals already waiting", () => {
    const engine = smallEngine(sglang());
    let now = running(engine, "x", 60, 0);
    // w (priority 0, after x) does not fit and cannot preempt its equal.
    engine.add(request("w", tokens(50, 500), { priority: 0, arrivalTime: now }));
    now += engine.step(now)!.duration;
    engine.add(request("y", tokens(10, 900), { priority: 20, arrivalTime: now }));
    engine.step(now);
    assert.deepEqual(runningIds(engine), ["y"]);
    assert.deepEqual(waitingIds(engine), ["w", "x"], "vLLM's key would put x first");
  });
});

describe("a preempted request's KV that the GPU no longer holds", () => {
  /**
   * x and y run (x better); y is preempted when the cache runs out and x grows over its
   * blocks, which the host tier still holds. Returns the bytes loaded back from the host.
   */
  function hostBytesLoaded(overrides: EngineConfigOverrides, x: number, y: number) {
    const engine = smallEngine({
      numGpuBlocks: 9,
      maxModelLen: 128,
      ...hostTier(32),
      ...overrides,
    });
    engine.add(request("x", tokens(56, 100), { maxTokens: 60, priority: x }));
    engine.add(request("y", tokens(40, 200), { maxTokens: 60, priority: y }));
    runToIdle(engine);
    const s = engine.stats();
    assert.equal(s.numPreemptions, 1);
    assert.equal(s.requestSuccess.length, 2);
    return s.hostTier!.toDevice.bytes;
  }
  // y had filled 3 blocks (48 tokens) when its next token found no room.
  const threeBlocks = 3 * 16 * (2 ** 30 / (16 * 32));

  it("is loaded back from the host tier first come, first served", () => {
    assert.equal(hostBytesLoaded({}, 0, 0), threeBlocks);
  });

  it("is loaded back from the host tier under vLLM's priority rules", () => {
    assert.equal(hostBytesLoaded({ priorityScheduling: { rules: "vllm" } }, 0, 5), threeBlocks);
  });

  it("is recomputed under SGLang's: the host tier is not asked", () => {
    assert.equal(hostBytesLoaded(sglang(), 10, 0), 0);
  });
});
