import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { metricValue, postJson, readJson, startTestBackend, TEST_MODEL } from "./helpers.ts";

const LABELS = `{engine="0",model_name="${TEST_MODEL}"}`;
const CONVERSATIONS = 12;
const OUTPUT_TOKENS = 300;

describe("KV pressure", () => {
  it("many concurrent long conversations on a small cache raise vllm:num_preemptions_total", async () => {
    // 64 blocks × 16 = 1008 usable tokens; 12 × (≈100 prompt + 300 output) needs ≈4800.
    const backend = await startTestBackend({ numGpuBlocks: 64, maxModelLen: 1000 });
    try {
      const before = await (await fetch(`${backend.url}/metrics`)).text();
      assert.equal(metricValue(before, `vllm:num_preemptions_total${LABELS}`), 0);
      const results = await Promise.all(
        Array.from({ length: CONVERSATIONS }, async (_, i) => {
          const res = await postJson(`${backend.url}/v1/chat/completions`, {
            messages: [
              {
                role: "system",
                content: "You are agent number ".concat(String(i), ". ").repeat(10),
              },
              { role: "user", content: "Continue the long task." },
            ],
            max_tokens: OUTPUT_TOKENS,
            ignore_eos: true,
          });
          return readJson(res);
        }),
      );
      for (const r of results) assert.equal(r.usage.completion_tokens, OUTPUT_TOKENS);
      const text = await (await fetch(`${backend.url}/metrics`)).text();
      const preemptions = metricValue(text, `vllm:num_preemptions_total${LABELS}`);
      assert.ok(
        preemptions > 0,
        `num_preemptions_total = ${preemptions}, want > 0 under KV pressure`,
      );
      assert.equal(metricValue(text, `vllm:kv_cache_usage_perc${LABELS}`), 0, "idle after load");
    } finally {
      await backend.close();
    }
  });
});
