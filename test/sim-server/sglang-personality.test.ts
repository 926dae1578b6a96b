import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createManualClock } from "../../src/sim-server/clock.ts";
import { createEngineDriver } from "../../src/sim-server/engine-driver.ts";
import { resolveSimBackendOptions } from "../../src/sim-server/options.ts";
import { DECODE_LOG_INTERVAL } from "../../src/sim-server/sglang-metrics.ts";
import { buildSimApp } from "../../src/sim-server/sim-app.ts";
import { simEngine } from "../../src/sim-server/start-sim-backend.ts";
import { metricValue, readJson } from "./helpers.ts";

const SCHED = '{engine_type="unified",model_name="m",moe_ep_rank="0",pp_rank="0",tp_rank="0"}';
const IDLE_LOG_S = 30;

function setup() {
  const options = resolveSimBackendOptions({
    model: "m",
    numGpuBlocks: 256,
    maxModelLen: 2048,
    personality: "sglang",
  });
  const clock = createManualClock();
  const driver = createEngineDriver({ engine: simEngine(options), clock, timeScale: 1 });
  const app = buildSimApp({ options, driver, startedAt: 1 });
  let steps = 0;
  /** Engine footprint when each step was delivered (the next step may start right after). */
  const usedAtStep: number[] = [];
  driver.onEvent((e) => {
    if (e.kind !== "step") return;
    steps++;
    usedAtStep[steps] = driver.engine.stats().numUsedTokens;
  });
  const stepUntil = (n: number) => {
    while (steps < n) clock.advance(0.1);
  };
  const gauge = async (name: string) =>
    metricValue(await (await app.request("/metrics")).text(), `sglang:${name}${SCHED}`);
  const submit = (id: string, maxTokens: number) =>
    driver.submit(
      {
        id,
        promptTokens: Array.from({ length: 40 }, (_, i) => i + 1),
        maxTokens,
        minTokens: 0,
        ignoreEos: true,
      },
      { onOutput: () => {} },
    );
  return { options, clock, driver, app, stepUntil, gauge, submit, usedAtStep };
}

describe("SGLang personality", () => {
  it("refreshes scheduler gauges at prefill batches and every 40 decode steps only", async () => {
    const { stepUntil, gauge, submit, usedAtStep } = setup();
    submit("a", 100);
    stepUntil(1); // the prefill batch
    assert.equal(await gauge("num_running_reqs"), 1);
    const usedAtPrefill = await gauge("num_used_tokens");
    assert.equal(usedAtPrefill, usedAtStep[1]);

    const lastStale = 1 + DECODE_LOG_INTERVAL - 1;
    stepUntil(lastStale);
    assert.ok(
      usedAtStep[lastStale] > usedAtPrefill,
      "the decode steps must have grown the KV footprint for this test to mean anything",
    );
    assert.equal(await gauge("num_used_tokens"), usedAtPrefill, "stale between log points");
    assert.equal(await gauge("gen_throughput"), 0);

    stepUntil(lastStale + 1);
    assert.equal(await gauge("num_used_tokens"), usedAtStep[lastStale + 1]);
    assert.ok((await gauge("gen_throughput")) > 0);
  });

  it("keeps reporting a finished request as running until the idle refresh 30 s later", async () => {
    const { driver, clock, stepUntil, gauge, submit } = setup();
    submit("a", 5);
    stepUntil(5);
    clock.flush();
    assert.equal(driver.engine.stats().numRunning, 0);
    assert.equal(await gauge("num_running_reqs"), 1, "SGLang's gauges lag the engine");
    clock.advance(IDLE_LOG_S * 1000);
    assert.equal(await gauge("num_running_reqs"), 0);
  });

  it("serves /get_server_info and /server_info with max_total_num_tokens", async () => {
    const { app, options } = setup();
    for (const path of ["/get_server_info", "/server_info"]) {
      const info = await readJson(await app.request(path));
      assert.equal(info.max_total_num_tokens, (options.numGpuBlocks - 1) * options.blockSize, path);
      assert.equal(info.context_length, options.maxModelLen);
    }
  });

  it("the vLLM personality has no SGLang endpoints", async () => {
    const options = resolveSimBackendOptions({ numGpuBlocks: 256, maxModelLen: 2048 });
    const driver = createEngineDriver({
      engine: simEngine(options),
      clock: createManualClock(),
      timeScale: 1,
    });
    const res = await buildSimApp({ options, driver }).request("/get_server_info");
    assert.equal(res.status, 404);
  });
});
