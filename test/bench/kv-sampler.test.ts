import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { kvUsageFromMetrics, startKvSampler } from "../../src/bench/kv-sampler.ts";
import { createManualClock } from "../../src/runtime/clock.ts";
import { startFakeBackend } from "../integration/helpers/fake-backend.ts";

test("the KV sampler reads each backend's gauge once a second; a backend that does not answer is a gap, not zero", async () => {
  const up = await startFakeBackend();
  const down = await startFakeBackend();
  await down.close();
  const clock = createManualClock(0);
  const sampler = startKvSampler([up.url, down.url], clock);
  try {
    // Each sample waits on real sockets: let them answer, then move the clock a second.
    const series = await (async () => {
      for (let i = 1; i <= 2; i++) {
        while (clock.pendingTimers() === 0) await new Promise((r) => setImmediate(r));
        if (i < 2) clock.advance(1000);
      }
      return sampler.stop();
    })();
    assert.deepEqual(series.t_s, [0, 1]);
    assert.deepEqual(
      series.backends.map((b) => [b.id, b.kv_usage]),
      [
        [up.url, [0, 0]],
        [down.url, [null, null]],
      ],
    );
    assert.equal(clock.pendingTimers(), 0, "stopped: nothing left armed");
  } finally {
    await up.close();
  }
});

test("KV usage is read from a router's per-backend figure, else the engine's own gauge", () => {
  const router = [
    "# HELP maitred_engine_kv_usage_ratio Engine KV-cache usage (0..1) as last polled.",
    "# TYPE maitred_engine_kv_usage_ratio gauge",
    'maitred_engine_kv_usage_ratio{backend="http://a:1"} 0.25',
    'maitred_engine_kv_usage_ratio{backend="http://b:2"} NaN',
  ].join("\n");
  assert.deepEqual(
    [...kvUsageFromMetrics(router, "http://router")],
    [
      ["http://a:1", 0.25],
      ["http://b:2", null],
    ],
    "an unknown figure is a gap",
  );
  const vllm = [
    'vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.2',
    'vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.6',
  ].join("\n");
  const [[id, usage]] = [...kvUsageFromMetrics(vllm, "http://vllm")];
  assert.equal(id, "http://vllm");
  assert.ok(Math.abs((usage ?? 0) - 0.4) < 1e-9, "the mean over data-parallel ranks");
  assert.deepEqual(
    [...kvUsageFromMetrics('sglang:token_usage{tp_rank="0"} 0.5', "s")],
    [["s", 0.5]],
  );
  assert.equal(kvUsageFromMetrics("process_cpu_seconds_total 3", "x").size, 0);
});

test("sampling a router gives one series per backend it reports, and none for the router itself", async () => {
  let usage = 0.1;
  const server = createServer((_req, res) => {
    res.end(`maitred_engine_kv_usage_ratio{backend="http://a:1"} ${usage}\n`);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clock = createManualClock(0);
  const sampler = startKvSampler([url], clock);
  try {
    while (clock.pendingTimers() === 0) await new Promise((r) => setImmediate(r));
    usage = 0.3;
    clock.advance(1000);
    while (clock.pendingTimers() === 0) await new Promise((r) => setImmediate(r));
    const series = await sampler.stop();
    assert.deepEqual(series.t_s, [0, 1]);
    assert.deepEqual(
      series.backends.map((b) => [b.id, b.kv_usage]),
      [["http://a:1", [0.1, 0.3]]],
    );
  } finally {
    server.close();
  }
});
