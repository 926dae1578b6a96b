import assert from "node:assert/strict";
import { test } from "node:test";
import { type FetchText, withHostKvTokens } from "../../src/backends/metrics-client.ts";
import {
  createVllmMetricsClient,
  vllmSampleFromText,
} from "../../src/backends/vllm-metrics-client.ts";

const INFO = (engine: string, blocks: string, extra = "") =>
  `vllm:cache_config_info{block_size="16",cache_dtype="auto",enable_prefix_caching="True",engine="${engine}",num_gpu_blocks="${blocks}"${extra}} 1.0`;

const BODY = [
  "# TYPE vllm:cache_config_info gauge",
  INFO("0", "26214"),
  'vllm:num_requests_running{engine="0",model_name="m"} 12.0',
  'vllm:num_requests_waiting{engine="0",model_name="m"} 3.0',
  'vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.4137',
  'vllm:num_preemptions_total{engine="0",model_name="m"} 4.0',
  'vllm:prefix_cache_queries_total{engine="0",model_name="m"} 1.843264e+06',
  'vllm:prefix_cache_hits_total{engine="0",model_name="m"} 1.207936e+06',
  'vllm:prompt_tokens_total{engine="0",model_name="m"} 1.851202e+06',
  'vllm:generation_tokens_total{engine="0",model_name="m"} 96115.0',
].join("\n");

test("a vLLM scrape gives capacity = block_size × num_gpu_blocks and the engine counters", () => {
  const { sample } = vllmSampleFromText(BODY);
  assert.deepEqual(sample, {
    capacityTokens: 16 * 26214,
    kvUsage: 0.4137,
    running: 12,
    waiting: 3,
    preemptionsTotal: 4,
    prefixCacheQueriesTotal: 1_843_264,
    prefixCacheHitsTotal: 1_207_936,
    promptTokensTotal: 1_851_202,
    generationTokensTotal: 96_115,
  });
});

test("a gauge the scrape lacks is unknown (null), never read as 0", () => {
  const body = BODY.split("\n")
    .filter((l) => !l.includes("kv_cache_usage_perc") && !l.includes("num_requests_waiting"))
    .join("\n");
  const { sample } = vllmSampleFromText(body);
  assert.equal(sample.kvUsage, null, "a missing KV gauge is not an empty cache");
  assert.equal(sample.waiting, null);
  assert.equal(sample.running, 12);
});

test("kv_cache_size_tokens is preferred when the build exports it, and DP engines add up", () => {
  const text = [
    INFO("0", "100", ',kv_cache_size_tokens="5000"'),
    INFO("1", "100"),
    'vllm:num_requests_running{engine="0"} 0',
  ].join("\n");
  assert.equal(vllmSampleFromText(text).sample.capacityTokens, 5000 + 1600);
});

test("deprecated gauge and prefix-cache twins are read when the new names are absent", () => {
  const text = [
    'vllm:gpu_cache_usage_perc{model_name="m"} 0.9',
    'vllm:gpu_prefix_cache_queries_total{model_name="m"} 10',
    'vllm:gpu_prefix_cache_hits_total{model_name="m"} 4',
  ].join("\n");
  const { sample } = vllmSampleFromText(text);
  assert.equal(sample.kvUsage, 0.9);
  assert.equal(sample.prefixCacheQueriesTotal, 10);
  assert.equal(sample.prefixCacheHitsTotal, 4);
  assert.equal(sample.capacityTokens, null, "no cache_config_info: capacity unknown");
});

test("a page without vllm gauges is a failed poll", () => {
  assert.throws(() => vllmSampleFromText("python_info 1\n"), /no vllm:\* gauges/);
});

test("the client keeps the last known capacity when a later scrape lacks the info family", async () => {
  const pages = [BODY, 'vllm:num_requests_running{engine="0"} 1'];
  const fetchText: FetchText = async () => ({ status: 200, text: pages.shift() ?? "" });
  const client = createVllmMetricsClient("http://b0", fetchText);
  assert.equal((await client.poll(AbortSignal.timeout(1000))).capacityTokens, 16 * 26214);
  const second = await client.poll(AbortSignal.timeout(1000));
  assert.equal(second.capacityTokens, 16 * 26214);
  assert.equal(second.running, 1);
});

test("a non-2xx /metrics answer rejects the poll", async () => {
  const client = createVllmMetricsClient("http://b0", async () => ({ status: 503, text: "" }));
  await assert.rejects(client.poll(AbortSignal.timeout(1000)), /answered 503/);
});

test("kv_offloading_size says whether the engine keeps evicted KV in host memory", () => {
  const tierOf = (extra: string) =>
    vllmSampleFromText(BODY.replace(INFO("0", "26214"), INFO("0", "26214", extra))).sample
      .hostKvTier;
  assert.equal(tierOf(',kv_offloading_backend="native",kv_offloading_size="200.0"'), true);
  assert.equal(tierOf(',kv_offloading_backend="native",kv_offloading_size="None"'), false);
  assert.equal(tierOf(""), undefined, "a build without the label does not say");
});

test("with the model's KV bytes per token, kv_offloading_size gives the tier's size in tokens", () => {
  const LLAMA_8B = 2 * 32 * 8 * 128 * 2; // 128 KiB per token
  const tier = ',kv_offloading_backend="native",kv_offloading_size="200.0"';
  const page = (infos: string[]) => BODY.replace(INFO("0", "26214"), infos.join("\n"));
  const one = page([INFO("0", "26214", tier)]);
  // vLLM's host pool: whole blocks of GiB·2^30 / (bytes per token × block size).
  assert.equal(vllmSampleFromText(one, "b", LLAMA_8B).sample.hostKvTokens, 1_638_400);
  assert.equal(
    vllmSampleFromText(one).sample.hostKvTokens,
    undefined,
    "bytes unknown: size unknown",
  );
  const dp = page([INFO("0", "100", tier), INFO("1", "100", tier)]);
  assert.equal(vllmSampleFromText(dp, "b", LLAMA_8B).sample.hostKvTokens, 2 * 1_638_400);
  const none = page([INFO("0", "26214", ',kv_offloading_size="None"')]);
  assert.equal(vllmSampleFromText(none, "b", LLAMA_8B).sample.hostKvTokens, undefined);
  assert.equal(vllmSampleFromText(none, "b", LLAMA_8B).sample.hostKvTier, false);
});

test("--host-kv-tokens sizes a tier the engine does not size, and never invents one it denies", async () => {
  const tierLabel = (size: string) =>
    BODY.replace(INFO("0", "26214"), INFO("0", "26214", `,kv_offloading_size="${size}"`));
  const pollOf = async (text: string, bytesPerToken: number | null) =>
    withHostKvTokens(
      createVllmMetricsClient("http://b0", async () => ({ status: 200, text }), bytesPerToken),
      500_000,
    ).poll(AbortSignal.timeout(1000));
  const silent = await pollOf(BODY, null);
  assert.equal(silent.hostKvTier, true);
  assert.equal(silent.hostKvTokens, 500_000);
  assert.equal((await pollOf(tierLabel("200.0"), null)).hostKvTokens, 500_000);
  assert.equal((await pollOf(tierLabel("200.0"), 131_072)).hostKvTokens, 1_638_400, "engine's");
  const denied = await pollOf(tierLabel("None"), null);
  assert.equal(denied.hostKvTier, false);
  assert.equal(denied.hostKvTokens, undefined);
});
