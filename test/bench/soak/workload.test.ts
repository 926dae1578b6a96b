import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { shortTraceLines, soakMix } from "../../../src/bench/soak/workload.ts";

interface Step {
  prompt_tokens: number;
  completion_tokens: number;
  tool_ms: number;
}

describe("the soak's short programs", () => {
  it("are seeded: the same seed the same trace, another seed another", () => {
    assert.deepEqual(shortTraceLines(1, 20), shortTraceLines(1, 20));
    assert.notDeepEqual(shortTraceLines(1, 20), shortTraceLines(2, 20));
  });

  it("make 1–3 calls each, their prompts growing by the answer and a tool result", () => {
    const lines = shortTraceLines(7, 200).map((l) => JSON.parse(l));
    assert.equal(lines.length, 200);
    assert.deepEqual(
      lines.slice(0, 2).map((p) => p.id),
      ["short-0", "short-1"],
    );
    const counts = new Set<number>();
    for (const p of lines) {
      const steps = p.steps as Step[];
      counts.add(steps.length);
      assert.ok(steps[0].prompt_tokens >= 300 && steps[0].prompt_tokens <= 800);
      for (const [i, s] of steps.entries()) {
        assert.ok(s.completion_tokens >= 8 && s.completion_tokens <= 32);
        assert.ok(s.tool_ms >= 200 && s.tool_ms <= 3000);
        if (i === 0) continue;
        const grew = s.prompt_tokens - steps[i - 1].prompt_tokens - steps[i - 1].completion_tokens;
        assert.ok(grew >= 50 && grew <= 150, `a tool result of ${grew} tokens`);
      }
    }
    assert.deepEqual([...counts].sort(), [1, 2, 3]);
  });
});

describe("the soak's mix", () => {
  it("splits the trace share between DeepSeek and Gemini, the rest to the short programs", () => {
    assert.equal(soakMix(0.1, "/t/s.jsonl"), "mix:deepseek=0.05,gemini=0.05,/t/s.jsonl=0.9");
  });

  it("leaves a side out when its share is 0 (a mix's weights are > 0)", () => {
    assert.equal(soakMix(0, "/t/s.jsonl"), "mix:/t/s.jsonl=1");
    assert.equal(soakMix(1, "/t/s.jsonl"), "mix:deepseek=0.5,gemini=0.5");
  });
});
