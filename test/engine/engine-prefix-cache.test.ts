import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { lastOutput, request, runToIdle, smallEngine, tokens } from "./engine-helpers.ts";

describe("engine prefix cache", () => {
  for (const L of [17, 96, 97, 100, 250]) {
    it(`serves floor((L−1)/16)·16 cached tokens for a repeated prompt of L=${L}`, () => {
      const engine = smallEngine({ numGpuBlocks: 64, maxModelLen: 512 });
      engine.add(request("first", tokens(L), { maxTokens: 2 }));
      const first = runToIdle(engine);
      engine.add(request("again", tokens(L), { maxTokens: 2 }));
      const again = runToIdle(engine, first.end);
      const want = Math.floor((L - 1) / 16) * 16;
      assert.equal(lastOutput(first, "first").numCachedTokens, 0);
      assert.equal(lastOutput(again, "again").numCachedTokens, want);
      const s = engine.stats();
      assert.equal(s.prefixCacheQueries, 2 * L, "queries are tokens, both admissions");
      assert.equal(s.prefixCacheHits, want);
    });
  }

  it("hits a shared prefix of a different prompt up to the last whole shared block", () => {
    const engine = smallEngine({ numGpuBlocks: 64, maxModelLen: 512 });
    const shared = tokens(40, 1);
    engine.add(request("a", [...shared, ...tokens(30, 500)], { maxTokens: 1 }));
    const r1 = runToIdle(engine);
    engine.add(request("b", [...shared, ...tokens(30, 900)], { maxTokens: 1 }));
    const r2 = runToIdle(engine, r1.end);
    assert.equal(lastOutput(r2, "b").numCachedTokens, 32);
  });

  it("misses after other prompts evicted the cached blocks under memory pressure", () => {
    const engine = smallEngine({ numGpuBlocks: 9, maxModelLen: 128 });
    engine.add(request("x", tokens(64, 1), { maxTokens: 1 }));
    let end = runToIdle(engine).end;
    for (let i = 0; i < 3; i++) {
      engine.add(request(`filler${i}`, tokens(100, 1000 * (i + 2)), { maxTokens: 1 }));
      end = runToIdle(engine, end).end;
    }
    engine.add(request("x-again", tokens(64, 1), { maxTokens: 1 }));
    const run = runToIdle(engine, end);
    assert.equal(lastOutput(run, "x-again").numCachedTokens, 0);
  });

  it("keeps the most recently used prefix when eviction must pick one (LRU)", () => {
    // 8 usable blocks; old and recent take 2 blocks each; a 64-token filler needs 5 blocks.
    const engine = smallEngine({ numGpuBlocks: 9, maxModelLen: 128 });
    engine.add(request("old", tokens(32, 1), { maxTokens: 1 }));
    let end = runToIdle(engine).end;
    engine.add(request("recent", tokens(32, 2000), { maxTokens: 1 }));
    end = runToIdle(engine, end).end;
    engine.add(request("filler", tokens(70, 5000), { maxTokens: 1 }));
    end = runToIdle(engine, end).end;
    engine.add(request("recent-again", tokens(33, 2000), { maxTokens: 1 }));
    engine.add(request("old-again", tokens(33, 1), { maxTokens: 1 }));
    const run = runToIdle(engine, end);
    assert.equal(lastOutput(run, "recent-again").numCachedTokens, 32);
    assert.equal(lastOutput(run, "old-again").numCachedTokens, 0);
  });

  it("reports zero KV usage when idle while a repeated prompt still hits (residency ≠ usage)", () => {
    const engine = smallEngine({ numGpuBlocks: 64, maxModelLen: 512 });
    engine.add(request("a", tokens(100), { maxTokens: 3 }));
    const first = runToIdle(engine);
    const idle = engine.stats();
    assert.equal(idle.kvCacheUsage, 0);
    assert.equal(idle.numUsedTokens, 0);
    assert.ok((idle.numCachedBlocks ?? 0) >= 6, "the prompt's full blocks stay resident");
    engine.add(request("b", tokens(100), { maxTokens: 3 }));
    const again = runToIdle(engine, first.end);
    assert.equal(lastOutput(again, "b").numCachedTokens, 96);
  });

  it("frees an aborted request's blocks, observes nothing and keeps its prefix hittable", () => {
    const engine = smallEngine({ numGpuBlocks: 64, maxModelLen: 512 });
    engine.add(request("a", tokens(100), { maxTokens: 50 }));
    let t = 0;
    for (let i = 0; i < 3; i++) t += engine.step(t)!.duration;
    assert.ok(engine.stats().kvCacheUsage > 0);
    assert.equal(engine.abort("a", t), true);
    const s = engine.stats();
    assert.equal(s.numRunning, 0);
    assert.equal(s.numWaiting, 0);
    assert.equal(s.kvCacheUsage, 0);
    assert.equal(s.requestSuccess.abort, 0, "client aborts are not counted (vLLM #31503)");
    assert.equal(s.e2eRequestLatency.count, 0);
    assert.equal(s.timeToFirstToken.count, 1, "TTFT was observed before the abort");
    assert.equal(engine.abort("a", t), false, "second abort is a no-op");
    engine.add(request("b", tokens(100), { maxTokens: 1 }));
    assert.equal(lastOutput(runToIdle(engine, t), "b").numCachedTokens, 96);
  });

  it("aborts a waiting request without touching the running ones", () => {
    const engine = smallEngine({ maxModelLen: 64 });
    engine.add(request("hog", tokens(60, 1), { maxTokens: 3 }));
    engine.step(0);
    engine.add(request("w", tokens(10, 100), { maxTokens: 3 }));
    assert.equal(engine.abort("w", 0.1), true);
    assert.equal(engine.stats().numWaiting, 0);
    assert.equal(engine.stats().numRunning, 1);
  });

  it("never hits when prefix caching is disabled", () => {
    const engine = smallEngine({ numGpuBlocks: 64, maxModelLen: 512, enablePrefixCaching: false });
    engine.add(request("a", tokens(100), { maxTokens: 1 }));
    const r1 = runToIdle(engine);
    engine.add(request("b", tokens(100), { maxTokens: 1 }));
    assert.equal(lastOutput(runToIdle(engine, r1.end), "b").numCachedTokens, 0);
    assert.equal(engine.stats().numCachedBlocks, 0);
  });

  it("resets the prefix cache only while no request holds blocks", () => {
    const engine = smallEngine({ numGpuBlocks: 64, maxModelLen: 512 });
    engine.add(request("a", tokens(100), { maxTokens: 2 }));
    const t = engine.step(0)!.duration;
    assert.equal(engine.resetPrefixCache?.(), false);
    const end = runToIdle(engine, t).end;
    assert.equal(engine.resetPrefixCache?.(), true);
    engine.add(request("b", tokens(100), { maxTokens: 1 }));
    assert.equal(lastOutput(runToIdle(engine, end), "b").numCachedTokens, 0);
  });
});
