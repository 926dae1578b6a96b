import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { build125Buckets, TTFT_BUCKETS } from "../../src/engine/histogram.ts";
import { lastOutput, request, runToIdle, smallEngine, tokens } from "./engine-helpers.ts";

describe("engine statistics (vLLM V1 update rules)", () => {
  it("accounts one lone request of P prompt and G output tokens like vLLM", () => {
    const P = 40;
    const G = 6;
    const engine = smallEngine({ numGpuBlocks: 64, maxModelLen: 512 });
    engine.add(request("a", tokens(P), { maxTokens: G, arrivalTime: 0 }));
    const run = runToIdle(engine, 0.5);
    const s = engine.stats();
    assert.equal(s.promptTokens, P);
    assert.equal(s.generationTokens, G);
    assert.equal(s.requestSuccess.length, 1);
    assert.equal(s.requestSuccess.stop, 0);
    assert.equal(s.timeToFirstToken.count, 1);
    assert.equal(s.e2eRequestLatency.count, 1);
    assert.equal(s.requestQueueTime.count, 1);
    assert.equal(s.requestPrefillTime?.count, 1);
    assert.equal(s.requestDecodeTime?.count, 1);
    assert.equal(s.requestInferenceTime?.count, 1);
    assert.equal(s.interTokenLatency.count, G - 1);
    assert.equal(s.iterationTokens?.count, G, "one output-producing step per token");
    assert.equal(s.iterationTokens?.sum, P + G);
    assert.equal(s.prefixCacheQueries, P);
    assert.equal(s.prefixCacheHits, 0);
    assert.equal(s.requestPromptTokens.sum, P);
    assert.equal(s.requestGenerationTokens.sum, G);
    assert.equal(s.steps, G);
    assert.ok(
      Math.abs(s.requestQueueTime.sum - 0.5) < 1e-12,
      "queued from arrival 0 to first step 0.5",
    );
    assert.ok(
      Math.abs(s.e2eRequestLatency.sum - run.end) < 1e-12,
      "e2e runs from arrival to last token",
    );
    assert.ok(
      Math.abs(s.busyTime - (run.end - 0.5)) < 1e-12,
      "busy time is the sum of step durations",
    );
    assert.equal(lastOutput(run, "a").numCachedTokens, 0);
  });

  it("fills histogram buckets with vLLM's boundaries", () => {
    const engine = smallEngine({ numGpuBlocks: 64, maxModelLen: 512 });
    engine.add(request("a", tokens(10), { maxTokens: 2, arrivalTime: 0 }));
    runToIdle(engine, 3);
    const ttft = engine.stats().timeToFirstToken;
    assert.deepEqual(ttft.buckets, TTFT_BUCKETS);
    const i = TTFT_BUCKETS.indexOf(5.0);
    assert.equal(ttft.counts[i], 1, "TTFT just over 3 s lands in the le=5 bucket");
    assert.equal(
      ttft.counts.reduce((a, b) => a + b, 0),
      1,
    );
  });

  it("credits the full prompt (cached tokens included) at the first token", () => {
    const engine = smallEngine({ numGpuBlocks: 64, maxModelLen: 512 });
    engine.add(request("a", tokens(100), { maxTokens: 1 }));
    const r = runToIdle(engine);
    engine.add(request("b", tokens(100), { maxTokens: 1 }));
    runToIdle(engine, r.end);
    assert.equal(engine.stats().promptTokens, 200);
  });

  it("builds 1-2-5 token buckets up to max_model_len", () => {
    assert.deepEqual(build125Buckets(600), [1, 2, 5, 10, 20, 50, 100, 200, 500]);
    assert.equal(build125Buckets(32768).at(-1), 20000);
  });

  it("returns snapshots the caller cannot use to corrupt the engine's counts", () => {
    const engine = smallEngine({ numGpuBlocks: 64, maxModelLen: 512 });
    engine.add(request("a", tokens(10), { maxTokens: 2 }));
    runToIdle(engine);
    const s = engine.stats();
    s.timeToFirstToken.counts[0] = 999;
    s.requestSuccess.length = 999;
    assert.notEqual(engine.stats().timeToFirstToken.counts[0], 999);
    assert.equal(engine.stats().requestSuccess.length, 1);
  });
});
