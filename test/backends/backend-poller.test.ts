import assert from "node:assert/strict";
import { test } from "node:test";
import { createBackendPoller } from "../../src/backends/backend-poller.ts";
import type { BackendMetricsClient } from "../../src/backends/metrics-client.ts";
import type { BackendMetricsSample } from "../../src/core/events.ts";
import { silentLogger } from "../../src/util/logger.ts";

const sample = (running: number): BackendMetricsSample => ({
  capacityTokens: 100,
  kvUsage: 0,
  running,
  waiting: 0,
  preemptionsTotal: 0,
  prefixCacheQueriesTotal: 0,
  prefixCacheHitsTotal: 0,
  promptTokensTotal: 0,
  generationTokensTotal: 0,
});

test("a failing backend becomes null in the tick while the others report", async () => {
  const clients: BackendMetricsClient[] = [
    { backendId: "a", poll: async () => sample(1) },
    { backendId: "b", poll: async () => Promise.reject(new Error("ECONNREFUSED")) },
  ];
  const poller = createBackendPoller({
    clients,
    concurrency: 4,
    timeoutMs: 1000,
    now: () => 7,
    logger: silentLogger,
  });
  assert.deepEqual(await poller.pollAll(), { a: sample(1), b: null });
  assert.deepEqual(poller.latest("a"), { sample: sample(1), at: 7 });
  assert.equal(poller.latest("b"), undefined);
});

test("polls run at most `concurrency` at a time", async () => {
  let active = 0;
  let peak = 0;
  const release: Array<() => void> = [];
  const clients: BackendMetricsClient[] = Array.from({ length: 5 }, (_, i) => ({
    backendId: `b${i}`,
    poll: () => {
      active++;
      peak = Math.max(peak, active);
      return new Promise<BackendMetricsSample>((resolve) => {
        release.push(() => {
          active--;
          resolve(sample(i));
        });
      });
    },
  }));
  const poller = createBackendPoller({
    clients,
    concurrency: 2,
    timeoutMs: 60_000,
    now: () => 0,
    logger: silentLogger,
  });
  const all = poller.pollAll();
  // Release polls as they start, one by one, until all five have answered.
  for (let done = 0; done < 5; done++) {
    while (release.length === 0) await new Promise((r) => setImmediate(r));
    release.shift()!();
  }
  const result = await all;
  assert.equal(peak, 2, `got ${peak} concurrent polls, want at most 2`);
  assert.equal(Object.keys(result).length, 5);
});

test("a poll that outlives its timeout is aborted and counts as failed", async () => {
  const clients: BackendMetricsClient[] = [
    {
      backendId: "slow",
      poll: (signal) =>
        new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
    },
  ];
  const poller = createBackendPoller({
    clients,
    concurrency: 1,
    timeoutMs: 1,
    now: () => 0,
    logger: silentLogger,
  });
  assert.deepEqual(await poller.pollAll(), { slow: null });
});
