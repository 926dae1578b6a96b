import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SimulatedEngine } from "../../src/engine/engine.ts";
import type { RequestOutput } from "../../src/engine/types.ts";
import { hostTier, request, smallEngine, tokens } from "./engine-helpers.ts";

/** A pressure workload: shared prefixes, mixed lengths, arrivals while busy, a tight cache. */
function drive(engine: SimulatedEngine, check: (now: number) => void, seed = 99) {
  let x = seed;
  const rand = (n: number) => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return (x >>> 8) % n;
  };
  const shared = tokens(48, 7);
  const finals: RequestOutput[] = [];
  let now = 0;
  let added = 0;
  let lastStart = Number.NEGATIVE_INFINITY;
  while (added < 60 || engine.hasWork()) {
    if (added < 60 && rand(3) === 0) {
      const own = tokens(1 + rand(150), 10_000 * (added + 1));
      const prompt = rand(2) === 0 ? [...shared, ...own] : own;
      engine.add(request(`r${added}`, prompt, { maxTokens: 1 + rand(60), arrivalTime: now }));
      added++;
    }
    const r = engine.step(now);
    if (r === null) {
      now += 0.01;
      continue;
    }
    assert.ok(r.startTime >= lastStart, "step start times never go backwards");
    assert.ok(r.duration > 0, "every step takes time");
    lastStart = r.startTime;
    now = r.startTime + r.duration;
    for (const o of r.outputs) if (o.finishReason) finals.push(o);
    check(now);
  }
  return finals;
}

const pressure = { numGpuBlocks: 30, maxModelLen: 256, maxNumBatchedTokens: 96 };

for (const [name, tier] of [
  ["", {}],
  [" with a host tier", hostTier(24)],
] as const) {
  describe(`engine invariants under pressure${name} (BLIS invariant list)`, () => {
    it("conserves blocks: free + referenced = numGpuBlocks − 1 after every step", () => {
      const engine = smallEngine({ ...pressure, ...tier });
      let checks = 0;
      drive(engine, () => {
        const v = engine.inspect();
        assert.equal(v.numFreeBlocks + v.numReferencedBlocks, 29);
        // Running requests hold blocks for their KV; waiting ones hold none, unless loading.
        for (const r of [...v.running, ...v.waiting]) {
          assert.equal(
            r.numBlocks,
            Math.ceil(r.numComputed / 16),
            `${r.id} holds blocks for its KV`,
          );
        }
        checks++;
      });
      assert.ok(engine.stats().numPreemptions > 0, "the workload must exercise preemption");
      assert.ok(checks > 100);
    });

    it("computes every admitted token once, plus exactly the counted recomputation", () => {
      const engine = smallEngine({ ...pressure, ...tier });
      let scheduled = 0;
      const original = engine.step.bind(engine);
      engine.step = (now) => {
        const r = original(now);
        if (r) scheduled += r.scheduledTokens;
        return r;
      };
      const finals = drive(engine, () => {});
      assert.equal(finals.length, 60, "every request finishes");
      const s = engine.stats();
      assert.ok(s.recomputedTokens > 0);
      // Each request computes its uncached prompt and every sampled token but the last.
      const want =
        finals.reduce(
          (n, o) => n + o.promptTokens - o.numCachedTokens + o.completionTokens - 1,
          0,
        ) + s.recomputedTokens;
      assert.equal(scheduled, want);
      assert.equal(
        s.generationTokens,
        finals.reduce((n, o) => n + o.completionTokens, 0),
      );
      assert.equal(s.kvCacheUsage, 0, "idle at the end");
      if (s.hostTier !== undefined) {
        assert.ok(s.hostTier.toDevice.bytes > 0, "the workload must exercise loads");
        assert.equal(s.hostTier.numLoading, 0);
      }
    });
  });
}
