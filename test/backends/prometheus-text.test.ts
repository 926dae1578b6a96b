import assert from "node:assert/strict";
import { test } from "node:test";
import { meanOf, parsePrometheusText, sumOf } from "../../src/backends/prometheus-text.ts";

const TEXT = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-8B"} 12.0
vllm:num_requests_running{engine="1",model_name="Qwen/Qwen3-8B"} 3.0
vllm:prompt_tokens_total{engine="0",model_name="Qwen/Qwen3-8B"} 1.851202e+06
weird{path="a\\"b,c}",other="x\\\\y"} 7 1700000000000
no_labels 42
broken{oops 1
vllm:kv_cache_usage_perc{engine="0"} 0.25
vllm:kv_cache_usage_perc{engine="1"} 0.75
`;

test("samples are summed over label sets and exponent values parse", () => {
  const f = parsePrometheusText(TEXT);
  assert.equal(sumOf(f, "vllm:num_requests_running"), 15);
  assert.equal(sumOf(f, "vllm:prompt_tokens_total"), 1_851_202);
  assert.equal(meanOf(f, "vllm:kv_cache_usage_perc"), 0.5);
  assert.equal(sumOf(f, "no_labels"), 42);
  assert.equal(sumOf(f, "absent"), null);
});

test("quoted label values keep escaped quotes, commas and braces; timestamps are ignored", () => {
  const f = parsePrometheusText(TEXT);
  const [s] = f.get("weird") ?? [];
  assert.deepEqual(s, { labels: { path: 'a"b,c}', other: "x\\y" }, value: 7 });
});

test("a malformed line is skipped without losing the others", () => {
  const f = parsePrometheusText(TEXT);
  assert.equal(f.has("broken"), false);
  assert.equal(f.size, 5);
});

test("a name filter keeps only wanted families", () => {
  const f = parsePrometheusText(TEXT, (n) => n.startsWith("vllm:"));
  assert.deepEqual([...f.keys()].sort(), [
    "vllm:kv_cache_usage_perc",
    "vllm:num_requests_running",
    "vllm:prompt_tokens_total",
  ]);
});
