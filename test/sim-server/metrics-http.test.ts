import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { chatPromptTokens } from "../../src/engine/chat-template.ts";
import { metricValue, postJson, startTestBackend, TEST_MODEL, userMessages } from "./helpers.ts";

const L = `{engine="0",model_name="${TEST_MODEL}"}`;
const reason = (r: string) => `{engine="0",finished_reason="${r}",model_name="${TEST_MODEL}"}`;
const BLOCK = 16;
const G = 5;

describe("/metrics after requests", () => {
  it("one request of P prompt and G output tokens moves counters and histograms by P and G", async () => {
    const backend = await startTestBackend({ startedAt: 1763312345.678 });
    try {
      const messages = userMessages(
        "Metrics accounting check with a prompt of several blocks. ".repeat(3),
      );
      const P = chatPromptTokens(messages, { addGenerationPrompt: true }).length;
      const scrape = async () => (await fetch(`${backend.url}/metrics`)).text();
      const ask = () =>
        postJson(`${backend.url}/v1/chat/completions`, {
          messages,
          max_tokens: G,
          ignore_eos: true,
        });

      assert.equal((await ask()).status, 200);
      const m = await scrape();
      assert.equal(metricValue(m, `vllm:prompt_tokens_total${L}`), P);
      assert.equal(metricValue(m, `vllm:generation_tokens_total${L}`), G);
      assert.equal(metricValue(m, `vllm:request_success_total${reason("length")}`), 1);
      assert.equal(metricValue(m, `vllm:request_success_total${reason("stop")}`), 0);
      assert.equal(metricValue(m, `vllm:time_to_first_token_seconds_count${L}`), 1);
      assert.equal(metricValue(m, `vllm:inter_token_latency_seconds_count${L}`), G - 1);
      assert.equal(metricValue(m, `vllm:e2e_request_latency_seconds_count${L}`), 1);
      assert.equal(metricValue(m, `vllm:prefix_cache_queries_total${L}`), P);
      assert.equal(metricValue(m, `vllm:prefix_cache_hits_total${L}`), 0);

      assert.equal((await ask()).status, 200);
      const m2 = await scrape();
      assert.equal(
        metricValue(m2, `vllm:prefix_cache_hits_total${L}`),
        Math.floor((P - 1) / BLOCK) * BLOCK,
      );
      assert.equal(
        metricValue(m2, `vllm:kv_cache_usage_perc${L}`),
        0,
        "usage is live footprint, not residency",
      );
      assert.equal(
        metricValue(m2, `vllm:prompt_tokens_created${L}`),
        1763312345.678,
        "_created stays fixed at server start",
      );
    } finally {
      await backend.close();
    }
  });
});
