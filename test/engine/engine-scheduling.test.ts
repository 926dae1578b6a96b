import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { request, runToIdle, smallEngine, tokens } from "./engine-helpers.ts";

describe("engine step scheduling (vLLM V1)", () => {
  it("returns null when there is nothing to do", () => {
    const engine = smallEngine();
    assert.equal(engine.step(0), null);
    assert.equal(engine.hasWork(), false);
  });

  it("chunks a long prompt into the token budget and emits only when the prompt is done", () => {
    const engine = smallEngine({ numGpuBlocks: 20, maxModelLen: 256, maxNumBatchedTokens: 64 });
    engine.add(request("a", tokens(200), { maxTokens: 2 }));
    const run = runToIdle(engine);
    assert.deepEqual(
      run.steps.map((s) => s.scheduledTokens),
      [64, 64, 64, 8, 1],
      "three full chunks, the 8-token rest, then one decode",
    );
    assert.deepEqual(
      run.steps.map((s) => s.outputs.length),
      [0, 0, 0, 1, 1],
      "partial prefills produce no output",
    );
  });

  it("schedules running decodes first and gives a new prompt only the leftover budget", () => {
    const engine = smallEngine({ numGpuBlocks: 40, maxModelLen: 512, maxNumBatchedTokens: 64 });
    engine.add(request("decoder", tokens(10, 1), { maxTokens: 50 }));
    engine.step(0);
    engine.add(request("prompt", tokens(300, 5000), { maxTokens: 1 }));
    const r = engine.step(1);
    assert.equal(r?.scheduledTokens, 64);
    const view = engine.inspect().running.find((v) => v.id === "prompt");
    assert.equal(view?.numComputed, 63, "64 budget − 1 decode token");
  });

  it("never runs more than maxNumSeqs requests and admits the next one when a slot frees", () => {
    const engine = smallEngine({ numGpuBlocks: 40, maxModelLen: 256, maxNumSeqs: 2 });
    engine.add(request("a", tokens(10, 100), { maxTokens: 3 }));
    engine.add(request("b", tokens(10, 200), { maxTokens: 6 }));
    engine.add(request("c", tokens(10, 300), { maxTokens: 3 }));
    let cFirst = Number.NaN;
    let aFinished = Number.NaN;
    runToIdle(engine, 0, (s) => {
      assert.ok(s.numRunning <= 2, `numRunning ${s.numRunning} > maxNumSeqs 2`);
      const end = s.startTime + s.duration;
      for (const o of s.outputs) {
        if (o.id === "c" && Number.isNaN(cFirst)) cFirst = end;
        if (o.id === "a" && o.finishReason) aFinished = end;
      }
    });
    assert.ok(
      cFirst > aFinished,
      `c's first token at ${cFirst} must follow a's finish at ${aFinished}`,
    );
  });

  it("blocks admission behind a waiting head that does not fit (no skipping)", () => {
    // 4 usable blocks: "big" needs 4, "hog" holds 2, "small" would fit in 1 but waits behind big.
    const engine = smallEngine({ maxModelLen: 64 });
    engine.add(request("hog", tokens(20, 1), { maxTokens: 3 }));
    engine.step(0);
    engine.add(request("big", tokens(60, 100), { maxTokens: 1 }));
    engine.add(request("small", tokens(5, 200), { maxTokens: 1 }));
    engine.step(1);
    const waiting = engine.inspect().waiting.map((v) => v.id);
    assert.deepEqual(waiting, ["big", "small"]);
  });

  it("refuses a prompt that reaches maxModelLen with a 400 and leaves the engine untouched", () => {
    const engine = smallEngine({ maxModelLen: 64 });
    assert.throws(() => engine.add(request("x", tokens(64))), /maximum context length is 64/);
    assert.throws(() => engine.add(request("e", [])), /empty/);
    assert.equal(engine.hasWork(), false);
  });

  it("rejects a duplicate request id", () => {
    const engine = smallEngine();
    engine.add(request("x", tokens(4)));
    assert.throws(() => engine.add(request("x", tokens(4))), /already in the engine/);
  });

  it("refuses to start when one maxModelLen sequence cannot fit in the KV cache", () => {
    assert.throws(() => smallEngine({ numGpuBlocks: 5, maxModelLen: 65 }), /maxModelLen/);
  });

  it("throws when stepped with a time earlier than the previous step", () => {
    const engine = smallEngine();
    engine.add(request("a", tokens(4), { maxTokens: 5 }));
    engine.step(1);
    assert.throws(() => engine.step(0.5), /backwards/);
  });
});
