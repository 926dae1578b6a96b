import assert from "node:assert/strict";
import { test } from "node:test";
import type { FetchText } from "../../src/backends/metrics-client.ts";
import {
  CAPACITY_REFRESH_POLLS,
  capacityFromServerInfo,
  createSglangMetricsClient,
  sglangSampleFromText,
} from "../../src/backends/sglang-metrics-client.ts";

const L = '{engine_type="unified",model_name="m",tp_rank="0"}';
const METRICS = [
  `sglang:num_running_reqs${L} 12.0`,
  `sglang:num_queue_reqs${L} 3.0`,
  `sglang:token_usage${L} 0.14`,
  `sglang:num_retracted_requests_total${L} 2.0`,
  'sglang:prompt_tokens_total{model_name="m"} 1000.0',
  'sglang:generation_tokens_total{model_name="m"} 50.0',
  'sglang:cached_tokens_total{model_name="m"} 600.0',
].join("\n");

function backend(serverInfo: () => { status: number; text: string }) {
  const calls: string[] = [];
  const fetchText: FetchText = async (path) => {
    calls.push(path);
    if (path === "/metrics") return { status: 200, text: METRICS };
    return serverInfo();
  };
  return { calls, client: createSglangMetricsClient("http://s0", fetchText) };
}

test("SGLang gauges map onto the sample; cached prompt tokens stand for prefix hits", async () => {
  const { client } = backend(() => ({ status: 200, text: '{"max_total_num_tokens":371088}' }));
  assert.deepEqual(await client.poll(AbortSignal.timeout(1000)), {
    capacityTokens: 371_088,
    kvUsage: 0.14,
    running: 12,
    waiting: 3,
    preemptionsTotal: 2,
    prefixCacheQueriesTotal: 1000,
    prefixCacheHitsTotal: 600,
    promptTokensTotal: 1000,
    generationTokensTotal: 50,
  });
});

test("server info is asked again while capacity is unknown, then only every refresh interval", async () => {
  let infoUp = false;
  const { calls, client } = backend(() =>
    infoUp ? { status: 200, text: '{"max_total_num_tokens":2048}' } : { status: 503, text: "" },
  );
  const first = await client.poll(AbortSignal.timeout(1000));
  assert.equal(first.capacityTokens, null, "metrics still count when server info fails");
  assert.equal(first.running, 12);
  infoUp = true;
  assert.equal((await client.poll(AbortSignal.timeout(1000))).capacityTokens, 2048);
  await client.poll(AbortSignal.timeout(1000));
  assert.equal(
    calls.filter((c) => c === "/get_server_info").length,
    2,
    "not fetched after capacity is known",
  );
});

test("a changed capacity is seen at the refresh interval, and at once after a failed poll", async () => {
  let capacity = 2048;
  let down = false;
  const calls: string[] = [];
  const client = createSglangMetricsClient("http://s0", async (path) => {
    calls.push(path);
    if (down) return { status: 503, text: "" };
    if (path === "/metrics") return { status: 200, text: METRICS };
    return { status: 200, text: JSON.stringify({ max_total_num_tokens: capacity }) };
  });
  const poll = () => client.poll(AbortSignal.timeout(1000));
  assert.equal((await poll()).capacityTokens, 2048);
  capacity = 4096;
  for (let i = 1; i < CAPACITY_REFRESH_POLLS; i++) {
    assert.equal((await poll()).capacityTokens, 2048, "cached between refreshes");
  }
  assert.equal((await poll()).capacityTokens, 4096, "re-read at the refresh interval");
  capacity = 8192;
  down = true;
  await assert.rejects(poll());
  down = false;
  assert.equal((await poll()).capacityTokens, 8192, "re-read after the server came back");
});

test("capacity falls back to internal_states[0].memory_usage.token_capacity", () => {
  assert.equal(
    capacityFromServerInfo('{"internal_states":[{"memory_usage":{"token_capacity":777}}]}'),
    777,
  );
  assert.equal(capacityFromServerInfo("not json"), null);
  assert.equal(capacityFromServerInfo("{}"), null);
});

test("HiCache's host pool gauge says the engine keeps evicted KV in host memory", () => {
  const withTier = `${METRICS}\nsglang:hicache_host_total_tokens${L} 1638400.0`;
  assert.equal(sglangSampleFromText(withTier).hostKvTier, true);
  assert.equal(sglangSampleFromText(withTier).hostKvTokens, 1_638_400);
  assert.equal(sglangSampleFromText(METRICS).hostKvTier, undefined);
});
