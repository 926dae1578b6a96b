import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { describe, it } from "node:test";
import { createManualClock } from "../../src/sim-server/clock.ts";
import { createEngineDriver } from "../../src/sim-server/engine-driver.ts";
import { resolveSimBackendOptions } from "../../src/sim-server/options.ts";
import { PROMETHEUS_CONTENT_TYPE } from "../../src/sim-server/prom-format.ts";
import { buildSimApp } from "../../src/sim-server/sim-app.ts";
import { simEngine } from "../../src/sim-server/start-sim-backend.ts";

/** Regenerate with UPDATE_GOLDEN=1 after an intended format change, then review the diff. */
const UPDATE = process.env.UPDATE_GOLDEN === "1";
const STARTED_AT = 1763312345.678;

function freshApp(personality: "vllm" | "sglang", kvOffloadingSize = 0) {
  const options = resolveSimBackendOptions({
    model: "Qwen/Qwen3-8B",
    numGpuBlocks: 26214,
    maxModelLen: 32768,
    personality,
    kvOffloadingSize,
  });
  const driver = createEngineDriver({
    engine: simEngine(options),
    clock: createManualClock(),
    timeScale: 1,
  });
  return buildSimApp({ options, driver, startedAt: STARTED_AT });
}

async function checkGolden(personality: "vllm" | "sglang", file: string, kvOffloadingSize = 0) {
  const res = await freshApp(personality, kvOffloadingSize).request("/metrics");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), PROMETHEUS_CONTENT_TYPE);
  const text = await res.text();
  const url = new URL(`../fixtures/sim-server/${file}`, import.meta.url);
  if (UPDATE) writeFileSync(url, text);
  assert.equal(text, readFileSync(url, "utf8"), `fresh /metrics differs from ${file}`);
}

describe("fresh /metrics", () => {
  it("vLLM personality matches the golden exposition byte for byte", async () => {
    await checkGolden("vllm", "fresh-metrics-vllm.txt");
  });

  it("SGLang personality matches the golden exposition byte for byte", async () => {
    await checkGolden("sglang", "fresh-metrics-sglang.txt");
  });

  it("with a host KV tier, vLLM adds the offloading connector's series", async () => {
    await checkGolden("vllm", "fresh-metrics-vllm-offloading.txt", 200);
  });

  it("with a host KV tier, SGLang adds HiCache's host pool gauges", async () => {
    await checkGolden("sglang", "fresh-metrics-sglang-hicache.txt", 200);
  });
});
