import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { lastOutput, request, runToIdle, smallEngine, tokens } from "./engine-helpers.ts";

const outputIds = (run: ReturnType<typeof runToIdle>, id: string) =>
  run.outputs.get(id)!.flatMap((o) => o.newTokenIds);

describe("samples of one prompt (n > 1)", () => {
  it("sample 0 is the prompt's own answer; other samples draw their own tokens and length", () => {
    const engine = smallEngine({ numGpuBlocks: 64, maxModelLen: 512, meanOutputTokens: 40 });
    const prompt = tokens(20);
    engine.add(request("alone", prompt, { maxTokens: 200, ignoreEos: false }));
    const alone = runToIdle(engine);
    for (let i = 0; i < 3; i++) {
      engine.add(request(`s${i}`, prompt, { maxTokens: 200, ignoreEos: false, sampleIndex: i }));
    }
    const run = runToIdle(engine, alone.end);
    assert.deepEqual(outputIds(run, "s0"), outputIds(alone, "alone"));
    const outputs = [0, 1, 2].map((i) => outputIds(run, `s${i}`).join(","));
    assert.equal(new Set(outputs).size, 3, "every sample differs");
  });
});

describe("forced output", () => {
  it("generates exactly the forced tokens, one per step, then stops", () => {
    const engine = smallEngine({ numGpuBlocks: 64, maxModelLen: 512 });
    const forced = [5, 6, 7, 8, 9];
    engine.add(request("f", tokens(10), { maxTokens: 100, ignoreEos: true, forcedOutput: forced }));
    const run = runToIdle(engine);
    assert.deepEqual(outputIds(run, "f"), forced);
    assert.equal(lastOutput(run, "f").finishReason, "stop");
    assert.equal(run.outputs.get("f")!.length, forced.length);
  });

  it("is cut by max_tokens with finish reason length", () => {
    const engine = smallEngine({ numGpuBlocks: 64, maxModelLen: 512 });
    engine.add(request("f", tokens(10), { maxTokens: 3, forcedOutput: [5, 6, 7, 8, 9] }));
    const run = runToIdle(engine);
    assert.deepEqual(outputIds(run, "f"), [5, 6, 7]);
    assert.equal(lastOutput(run, "f").finishReason, "length");
  });

  it("refuses an empty forced output", () => {
    const engine = smallEngine();
    assert.throws(() => engine.add(request("f", tokens(4), { forcedOutput: [] })), /at least one/);
  });
});
