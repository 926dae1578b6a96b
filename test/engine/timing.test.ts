import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createEngine } from "../../src/engine/engine.ts";
import {
  engineConfigFromProfile,
  resolveProfile,
  stepDuration,
  TIMING_PROFILES,
} from "../../src/engine/timing.ts";
import { ConfigError } from "../../src/errors.ts";
import { request, tokens } from "./engine-helpers.ts";

const llama = resolveProfile("llama-3.1-8b-h100").timing;
const ms = (s: number) => s * 1000;

describe("timing model", () => {
  it("prices a batch-1 decode at 1k context near the measured 6.5 ms", () => {
    const t = ms(stepDuration(llama, { tokens: 1, contextTokens: 1000, attentionPairs: 0 }));
    assert.ok(t > 6.3 && t < 6.7, `got ${t} ms, want ≈6.5`);
  });

  it("prices a 2k-token prefill between 45 and 50 ms", () => {
    const t = ms(
      stepDuration(llama, { tokens: 2048, contextTokens: 0, attentionPairs: 2048 * 1024 }),
    );
    assert.ok(t >= 45 && t <= 50, `got ${t} ms`);
  });

  it("makes the real engine step times match the model for a prefill and a decode", () => {
    const engine = createEngine(engineConfigFromProfile("llama-3.1-8b-h100"));
    engine.add(request("a", tokens(2048), { maxTokens: 2 }));
    const prefill = engine.step(0)!;
    const decode = engine.step(prefill.duration)!;
    assert.ok(
      ms(prefill.duration) >= 45 && ms(prefill.duration) <= 50,
      `prefill ${ms(prefill.duration)} ms`,
    );
    assert.ok(
      ms(decode.duration) > 6.4 && ms(decode.duration) < 6.7,
      `decode ${ms(decode.duration)} ms`,
    );
  });

  it("raises the inter-token latency with aggregate context length", () => {
    const decodeStep = (ctx: number) => {
      const engine = createEngine(engineConfigFromProfile("llama-3.1-8b-h100"));
      for (let i = 0; i < 32; i++)
        engine.add(request(`r${i}`, tokens(ctx, i * 100_000), { maxTokens: 200 }));
      let t = 0;
      let r = engine.step(t)!;
      while (r.scheduledTokens !== 32) {
        t += r.duration;
        r = engine.step(t)!;
      }
      return r.duration;
    };
    const short = decodeStep(500);
    const long = decodeStep(4000);
    assert.ok(long > short * 1.5, `32 decodes: ${ms(short)} ms at 500 ctx vs ${ms(long)} ms at 4k`);
  });

  it("prices 32 decodes at 2k context near the measured 11 ms", () => {
    const t = ms(stepDuration(llama, { tokens: 32, contextTokens: 32 * 2048, attentionPairs: 0 }));
    assert.ok(t > 10.5 && t < 11.5, `got ${t} ms`);
  });

  it("inflates co-scheduled decodes' step when a long prompt chunk rides along", () => {
    const alone = stepDuration(llama, { tokens: 64, contextTokens: 64 * 2048, attentionPairs: 0 });
    const withChunk = stepDuration(llama, {
      tokens: 64 + 2048,
      contextTokens: 64 * 2048,
      attentionPairs: 2048 * 1024,
    });
    assert.ok(ms(alone) > 15 && ms(alone) < 16.5, `64 decodes alone ${ms(alone)} ms`);
    assert.ok(
      ms(withChunk) > 55 && ms(withChunk) < 62,
      `with a 2048 chunk ${ms(withChunk)} ms (measured: ≈59)`,
    );
  });

  it("resolves every named profile with a maxModelLen that fits its KV cache", () => {
    for (const name of Object.keys(TIMING_PROFILES)) {
      const config = engineConfigFromProfile(name);
      assert.doesNotThrow(() => createEngine(config), name);
    }
    assert.ok(TIMING_PROFILES["qwen3-32b-h100"], "qwen3-32b-h100 is registered");
  });

  it("overrides single coefficients and keeps the rest", () => {
    const p = resolveProfile("llama-3.1-8b-h100", { tWeights: 0.01 });
    assert.equal(p.timing.tWeights, 0.01);
    assert.equal(p.timing.b, llama.b);
    assert.equal(
      TIMING_PROFILES["llama-3.1-8b-h100"].timing.tWeights,
      llama.tWeights,
      "registry untouched",
    );
  });

  it("rejects an unknown profile and a negative coefficient with ConfigError naming the field", () => {
    assert.throws(
      () => resolveProfile("gpt-5-tpu"),
      (e: unknown) => e instanceof ConfigError && e.field === "profile",
    );
    assert.throws(
      () => resolveProfile("llama-3.1-8b-h100", { c: -1 }),
      (e: unknown) => e instanceof ConfigError && e.field === "timing.c",
    );
  });

  it("keeps a profile's token capacity when the block size is overridden", () => {
    const c16 = engineConfigFromProfile("llama-3.1-8b-h100");
    const c32 = engineConfigFromProfile("llama-3.1-8b-h100", { blockSize: 32 });
    assert.equal(c32.numGpuBlocks * 32, c16.numGpuBlocks * 16);
  });

  it("defaults to vLLM's engine knobs", () => {
    const c = engineConfigFromProfile("llama-3.1-8b-h100");
    assert.equal(c.blockSize, 16);
    assert.equal(c.maxNumBatchedTokens, 8192);
    assert.equal(c.maxNumSeqs, 256);
    assert.equal(c.enablePrefixCaching, true);
  });
});
