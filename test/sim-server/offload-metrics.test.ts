import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { vllmSampleFromText } from "../../src/backends/vllm-metrics-client.ts";
import type { EngineStats } from "../../src/engine/types.ts";
import { createManualClock } from "../../src/sim-server/clock.ts";
import { createEngineDriver } from "../../src/sim-server/engine-driver.ts";
import { resolveSimBackendOptions } from "../../src/sim-server/options.ts";
import { buildSimApp } from "../../src/sim-server/sim-app.ts";
import { simEngine } from "../../src/sim-server/start-sim-backend.ts";
import { renderVllmMetrics, type VllmMetricsInfo } from "../../src/sim-server/vllm-metrics.ts";
import { sampleOf } from "../../src/simulate/engine-probe.ts";
import { hostTier, request, runToIdle, smallEngine, tokens } from "../engine/engine-helpers.ts";
import { metricValue } from "./helpers.ts";

const INFO: VllmMetricsInfo = {
  modelName: "m",
  blockSize: 16,
  numGpuBlocks: 9,
  enablePrefixCaching: true,
  kvOffloadingSize: 1,
  createdAt: 1,
};
const BASE = '{engine="0",model_name="m"}';
const typed = (type: string) => `{engine="0",model_name="m",transfer_type="${type}"}`;

/** An engine whose host tier stored blocks and loaded some back: x, evicted, then x again. */
function statsAfterTransfers(): EngineStats {
  return engineAfterTransfers().stats();
}

function engineAfterTransfers() {
  const engine = smallEngine({ numGpuBlocks: 9, maxModelLen: 128, ...hostTier(32) });
  engine.add(request("x", tokens(64, 1), { maxTokens: 1 }));
  let end = runToIdle(engine).end;
  engine.add(request("filler", tokens(120, 5000), { maxTokens: 1, arrivalTime: end }));
  end = runToIdle(engine, end).end;
  engine.add(request("x again", tokens(64, 1), { maxTokens: 1, arrivalTime: end }));
  runToIdle(engine, end);
  const s = engine.stats();
  assert.ok(
    s.hostTier!.toDevice.bytes > 0 && s.hostTier!.toHost.bytes > 0,
    "both directions moved",
  );
  return engine;
}

/** The offloading families in the order their HELP lines come (`_created` ones left out). */
const offloadFamilies = (text: string) =>
  [...text.matchAll(/^# HELP (vllm:kv_offload\S+)/gm)]
    .map((m) => m[1])
    .filter((name) => !name.endsWith("_created"));

describe("vLLM's offloading connector series", () => {
  it("new: the load and store series beside the deprecated family, from the same transfers", () => {
    const s = statsAfterTransfers();
    const t = s.hostTier!;
    const text = renderVllmMetrics(s, INFO);
    assert.deepEqual(offloadFamilies(text), [
      "vllm:kv_offload_total_bytes_total",
      "vllm:kv_offload_total_time_total",
      "vllm:kv_offload_size",
      "vllm:kv_offload_load_bytes_total",
      "vllm:kv_offload_load_time_total",
      "vllm:kv_offload_load_size",
      "vllm:kv_offload_store_bytes_total",
      "vllm:kv_offload_store_time_total",
      "vllm:kv_offload_store_size",
    ]);
    const v = (series: string) => metricValue(text, series);
    for (const [dir, type, stats] of [
      ["load", "CPU_to_GPU", t.toDevice],
      ["store", "GPU_to_CPU", t.toHost],
    ] as const) {
      assert.equal(v(`vllm:kv_offload_${dir}_bytes_total${BASE}`), stats.bytes, dir);
      assert.equal(v(`vllm:kv_offload_total_bytes_total${typed(type)}`), stats.bytes, dir);
      assert.equal(v(`vllm:kv_offload_${dir}_time_total${BASE}`), stats.seconds, dir);
      assert.equal(v(`vllm:kv_offload_total_time_total${typed(type)}`), stats.seconds, dir);
      assert.equal(v(`vllm:kv_offload_${dir}_size_count${BASE}`), stats.sizes.count, dir);
      assert.equal(v(`vllm:kv_offload_${dir}_size_sum${BASE}`), stats.bytes, dir);
      assert.equal(v(`vllm:kv_offload_size_count${typed(type)}`), stats.sizes.count, dir);
    }
    // The deprecated family's children are made up front, loads first.
    const children = [
      ...text.matchAll(/^vllm:kv_offload_total_bytes_total\{.*transfer_type="(\w+)"/gm),
    ];
    assert.deepEqual(
      children.map((m) => m[1]),
      ["CPU_to_GPU", "GPU_to_CPU"],
    );
  });

  it("old: the deprecated family only, stores first", () => {
    const text = renderVllmMetrics(statsAfterTransfers(), { ...INFO, vllmMetrics: "old" });
    assert.deepEqual(offloadFamilies(text), [
      "vllm:kv_offload_total_bytes_total",
      "vllm:kv_offload_total_time_total",
      "vllm:kv_offload_size",
    ]);
    const children = [
      ...text.matchAll(/^vllm:kv_offload_total_bytes_total\{.*transfer_type="(\w+)"/gm),
    ];
    assert.deepEqual(
      children.map((m) => m[1]),
      ["GPU_to_CPU", "CPU_to_GPU"],
    );
  });

  it("a fresh backend with a host tier exports both families at 0; without one, neither", async () => {
    for (const [personality, kvOffloadingSize, families] of [
      ["vllm", 10, 9],
      ["vllm", 0, 0],
      ["sglang", 10, 0],
    ] as const) {
      const options = resolveSimBackendOptions({
        numGpuBlocks: 256,
        maxModelLen: 2048,
        personality,
        kvOffloadingSize,
      });
      const engine = simEngine(options);
      const driver = createEngineDriver({ engine, clock: createManualClock(), timeScale: 1 });
      const text = await (await buildSimApp({ options, driver }).request("/metrics")).text();
      assert.equal(
        offloadFamilies(text).length,
        families,
        `${personality} ${kvOffloadingSize} GiB`,
      );
      if (families > 0) {
        const series = `vllm:kv_offload_load_bytes_total{engine="0",model_name="${options.model}"}`;
        assert.equal(metricValue(text, series), 0);
      }
    }
  });
});

describe("the router reads the host link's price from those series", () => {
  it("bytes and seconds loaded into the GPU, from the newer series and from the older family alone", () => {
    const s = statsAfterTransfers();
    const loaded = s.hostTier!.toDevice;
    for (const vllmMetrics of ["new", "old"] as const) {
      const text = renderVllmMetrics(s, { ...INFO, vllmMetrics });
      const { sample } = vllmSampleFromText(text);
      assert.equal(sample.hostLoadBytesTotal, loaded.bytes, vllmMetrics);
      assert.equal(sample.hostLoadSecondsTotal, loaded.seconds, vllmMetrics);
    }
  });

  it("the simulator reads its engines' loads as the router reads them from /metrics", () => {
    const engine = engineAfterTransfers();
    const s = engine.stats();
    const { sample } = vllmSampleFromText(renderVllmMetrics(s, INFO));
    const sim = sampleOf(engine, s);
    assert.equal(sim.hostLoadBytesTotal, sample.hostLoadBytesTotal);
    assert.equal(sim.hostLoadSecondsTotal, sample.hostLoadSecondsTotal);
  });

  it("where both families are exported, the newer series are read", () => {
    const older = (name: string, v: number) =>
      `vllm:${name}${typed("CPU_to_GPU")} ${v}\nvllm:${name}${typed("GPU_to_CPU")} 7`;
    const text = [
      'vllm:num_requests_running{engine="0",model_name="m"} 1',
      older("kv_offload_total_bytes_total", 100),
      older("kv_offload_total_time_total", 1),
      `vllm:kv_offload_load_bytes_total${BASE} 300`,
      `vllm:kv_offload_load_time_total${BASE} 2`,
    ].join("\n");
    const { sample } = vllmSampleFromText(text);
    assert.equal(sample.hostLoadBytesTotal, 300);
    assert.equal(sample.hostLoadSecondsTotal, 2);
  });

  it("an engine without the series leaves them out: unknown, not zero", () => {
    const engine = smallEngine({ numGpuBlocks: 9, maxModelLen: 128 });
    const text = renderVllmMetrics(engine.stats(), { ...INFO, kvOffloadingSize: 0 });
    const { sample } = vllmSampleFromText(text);
    assert.equal(sample.hostLoadBytesTotal, undefined);
    assert.equal(sample.hostLoadSecondsTotal, undefined);
  });
});
