import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { SimBackend } from "../../src/sim-server/start-sim-backend.ts";
import {
  metricValue,
  postJson,
  startTestBackend,
  TEST_MODEL,
  userMessages,
  waitForEvent,
} from "./helpers.ts";

const LABELS = `{engine="0",model_name="${TEST_MODEL}"}`;
/** Long enough that the request is still generating when the client leaves. */
const LONG = { max_tokens: 6000, ignore_eos: true };

async function metrics(backend: SimBackend): Promise<string> {
  return (await fetch(`${backend.url}/metrics`)).text();
}

describe("client disconnect", () => {
  let backend: SimBackend;
  before(async () => {
    backend = await startTestBackend();
  });
  after(() => backend.close());

  it("a streaming client that leaves frees its blocks: running, waiting and usage back to 0", async () => {
    const controller = new AbortController();
    const aborted = waitForEvent(backend.driver, (e) => e.kind === "aborted");
    const res = await postJson(
      `${backend.url}/v1/chat/completions`,
      { messages: userMessages("stream then leave ".repeat(20)), stream: true, ...LONG },
      { signal: controller.signal },
    );
    const reader = res.body!.getReader();
    await reader.read(); // the first chunk: the request is running
    const during = backend.engine.stats();
    assert.equal(during.numRunning, 1, "the request must be running before the client leaves");
    assert.ok(during.kvCacheUsage > 0);
    controller.abort();
    await aborted;
    const stats = backend.engine.stats();
    assert.equal(stats.numRunning, 0);
    assert.equal(stats.numWaiting, 0);
    assert.equal(stats.kvCacheUsage, 0);
    const text = await metrics(backend);
    assert.equal(metricValue(text, `vllm:num_requests_running${LABELS}`), 0);
    assert.equal(metricValue(text, `vllm:kv_cache_usage_perc${LABELS}`), 0);
    assert.equal(
      metricValue(
        text,
        `vllm:request_success_total{engine="0",finished_reason="abort",model_name="${TEST_MODEL}"}`,
      ),
      0,
      "vLLM V1 does not count client aborts (vllm-project/vllm#31503)",
    );
  });

  it("a non-streaming client that leaves aborts its request too", async () => {
    const controller = new AbortController();
    const started = waitForEvent(
      backend.driver,
      (e) => e.kind === "step" && e.result.outputs.some((o) => o.newTokenIds.length > 0),
    );
    const aborted = waitForEvent(backend.driver, (e) => e.kind === "aborted");
    const pending = postJson(
      `${backend.url}/v1/chat/completions`,
      { messages: userMessages("wait then leave"), ...LONG },
      { signal: controller.signal },
    ).catch((err: unknown) => err);
    await started;
    controller.abort();
    assert.equal(((await pending) as Error).name, "AbortError");
    await aborted;
    const stats = backend.engine.stats();
    assert.deepEqual([stats.numRunning, stats.numWaiting, stats.kvCacheUsage], [0, 0, 0]);
  });
});
