import assert from "node:assert/strict";
import { test } from "node:test";
import { enginePromptCounters, promptTokensBetween } from "../../src/bench/engine-window.ts";

const vllm = (rank: string, queries: number, hits: number, host?: [number, number]) =>
  [
    `vllm:prefix_cache_queries_total{engine="${rank}",model_name="m"} ${queries}`,
    `vllm:prefix_cache_hits_total{engine="${rank}",model_name="m"} ${hits}`,
    ...(host === undefined
      ? []
      : [
          `vllm:external_prefix_cache_hits_total{engine="${rank}",model_name="m"} ${host[0]}`,
          `vllm:kv_offload_total_time_total{engine="${rank}",model_name="m",transfer_type="GPU_to_CPU"} 9`,
          `vllm:kv_offload_total_time_total{engine="${rank}",model_name="m",transfer_type="CPU_to_GPU"} ${host[1]}`,
        ]),
  ].join("\n");

test("the engines' split of prompt tokens: summed over data-parallel ranks, loads timed host to GPU only", () => {
  const start = enginePromptCounters(
    `${vllm("0", 100, 40, [10, 0.5])}\n${vllm("1", 50, 5, [0, 0])}`,
  );
  const end = enginePromptCounters(
    `${vllm("0", 300, 100, [60, 1.5])}\n${vllm("1", 150, 45, [20, 0.25])}`,
  );
  assert.ok(start && end);
  assert.deepEqual(promptTokensBetween(start, end), {
    queried: 300,
    gpu_hits: 100,
    host_loaded: 70,
    prefilled: 130,
    host_load_s: 1.25,
  });
});

test("an engine without a tier loads nothing; one without the prefix-cache counters is unknown", () => {
  assert.deepEqual(enginePromptCounters(vllm("0", 10, 4)), {
    queries: 10,
    hits: 4,
    hostHits: 0,
    loadS: 0,
  });
  assert.equal(enginePromptCounters('sglang:cached_tokens_total{tp_rank="0"} 5'), null);
  assert.equal(enginePromptCounters("vllm:prefix_cache_queries_total 10"), null);
});
