import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createEngine } from "../../src/engine/engine.ts";
import { decode, encode } from "../../src/engine/tokenizer.ts";
import {
  lastOutput,
  request,
  runToIdle,
  smallConfig,
  smallEngine,
  tokens,
} from "./engine-helpers.ts";

function outputIds(run: ReturnType<typeof runToIdle>, id: string): number[] {
  return run.outputs.get(id)!.flatMap((o) => o.newTokenIds);
}

describe("engine output length and content", () => {
  it("generates exactly max_tokens with ignore_eos and finishes with length", () => {
    const engine = smallEngine({ numGpuBlocks: 64, maxModelLen: 512, meanOutputTokens: 1 });
    engine.add(request("a", tokens(20), { maxTokens: 37, ignoreEos: true }));
    const run = runToIdle(engine);
    assert.equal(run.outputs.get("a")!.length, 37);
    const last = lastOutput(run, "a");
    assert.equal(last.finishReason, "length");
    assert.equal(last.completionTokens, 37);
    assert.equal(last.promptTokens, 20);
  });

  it("stops naturally with stop before max_tokens when the sampled length is shorter", () => {
    const engine = smallEngine({ numGpuBlocks: 64, maxModelLen: 512, meanOutputTokens: 3 });
    const lengths: number[] = [];
    let end = 0;
    for (let i = 0; i < 20; i++) {
      engine.add(request(`r${i}`, tokens(10, 100 * i), { maxTokens: 200, ignoreEos: false }));
      const run = runToIdle(engine, end);
      end = run.end;
      const last = lastOutput(run, `r${i}`);
      assert.equal(last.finishReason, "stop");
      lengths.push(last.completionTokens);
    }
    assert.ok(new Set(lengths).size > 3, `lengths vary with the prompt: ${lengths}`);
    assert.ok(Math.max(...lengths) < 200);
  });

  it("caps natural lengths at max_tokens with finish reason length", () => {
    const engine = smallEngine({ numGpuBlocks: 64, maxModelLen: 512, meanOutputTokens: 10_000 });
    engine.add(request("a", tokens(10), { maxTokens: 5, ignoreEos: false }));
    const last = lastOutput(runToIdle(engine), "a");
    assert.equal(last.completionTokens, 5);
    assert.equal(last.finishReason, "length");
  });

  it("honours min_tokens: no EOS before it", () => {
    const engine = smallEngine({ numGpuBlocks: 64, maxModelLen: 512, meanOutputTokens: 1 });
    engine.add(request("a", tokens(10), { maxTokens: 100, minTokens: 25, ignoreEos: false }));
    const last = lastOutput(runToIdle(engine), "a");
    assert.equal(last.completionTokens, 25);
    assert.equal(last.finishReason, "stop");
  });

  it("stops at max_model_len with length", () => {
    const engine = smallEngine({ maxModelLen: 64 });
    engine.add(request("a", tokens(60), { maxTokens: 100 }));
    const last = lastOutput(runToIdle(engine), "a");
    assert.equal(last.completionTokens, 4, "60 prompt + 4 generated = 64 = max_model_len");
    assert.equal(last.finishReason, "length");
  });

  it("is deterministic across runs with the same seed and differs with another seed", () => {
    const play = (seed: number) => {
      const engine = createEngine(smallConfig({ numGpuBlocks: 40, maxModelLen: 256, seed }));
      for (let i = 0; i < 6; i++) {
        engine.add(
          request(`r${i}`, tokens(30 + i * 7, i * 1000), { maxTokens: 60, ignoreEos: false }),
        );
      }
      const run = runToIdle(engine);
      return JSON.stringify(run.steps);
    };
    assert.equal(play(7), play(7));
    assert.notEqual(play(7), play(8));
  });

  it("generates the same tokens for the same prompt regardless of the request id", () => {
    const engine = smallEngine({ numGpuBlocks: 64, maxModelLen: 512 });
    engine.add(request("one", tokens(20), { maxTokens: 10 }));
    const r1 = runToIdle(engine);
    engine.add(request("two", tokens(20), { maxTokens: 10 }));
    const r2 = runToIdle(engine, r1.end);
    assert.deepEqual(outputIds(r1, "one"), outputIds(r2, "two"));
  });

  it("produces token ids that decode to text which re-encodes to the same ids", () => {
    const engine = smallEngine({ numGpuBlocks: 64, maxModelLen: 512 });
    engine.add(request("a", tokens(20), { maxTokens: 80 }));
    const ids = outputIds(runToIdle(engine), "a");
    const text = decode(ids);
    assert.match(text, /[a-z]/);
    assert.deepEqual(encode(text), ids);
  });
});
