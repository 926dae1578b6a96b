import assert from "node:assert/strict";
import { test } from "node:test";
import type { BackendMetricsSample } from "../../src/core/events.ts";
import { createManualClock } from "../../src/runtime/clock.ts";
import { createTicker, type MetricsSamples } from "../../src/runtime/ticker.ts";
import { silentLogger } from "../../src/util/logger.ts";

const sample: BackendMetricsSample = {
  capacityTokens: 1000,
  kvUsage: 0.5,
  running: 1,
  waiting: 0,
  preemptionsTotal: 0,
  prefixCacheQueriesTotal: 0,
  prefixCacheHitsTotal: 0,
  promptTokensTotal: 0,
  generationTokensTotal: 0,
};

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

test("each interval the ticker polls, then sends one tick with the samples", async () => {
  const clock = createManualClock();
  const ticks: MetricsSamples[] = [];
  let polls = 0;
  let tickSent = deferred<void>();
  const ticker = createTicker({
    clock,
    intervalMs: 5000,
    logger: silentLogger,
    poll: async () => {
      polls++;
      return { "http://b0": sample, "http://b1": null };
    },
    onTick(samples) {
      ticks.push(samples);
      tickSent.resolve();
    },
  });
  await ticker.start(); // ticks at once: capacity is wanted before the first interval
  assert.equal(ticks.length, 1);
  tickSent = deferred();
  clock.advance(4999);
  assert.equal(polls, 1, "no poll before the interval");
  clock.advance(1);
  await tickSent.promise;
  assert.equal(polls, 2);
  assert.deepEqual(ticks[1], { "http://b0": sample, "http://b1": null });
  ticker.stop();
  assert.equal(clock.pendingTimers(), 0, "stop cancels the next tick");
});

test("ticks never overlap: a slow poll delays the next interval instead of starting another", async () => {
  const clock = createManualClock();
  const gate = deferred<MetricsSamples>();
  let polls = 0;
  const ticked = deferred<void>();
  const ticker = createTicker({
    clock,
    intervalMs: 1000,
    logger: silentLogger,
    poll: () => {
      polls++;
      return gate.promise;
    },
    onTick: () => ticked.resolve(),
  });
  const started = ticker.start();
  clock.advance(10_000);
  assert.equal(polls, 1, "no timer is armed while the first poll is pending");
  assert.equal(clock.pendingTimers(), 0);
  const joined = ticker.runOnce();
  assert.equal(polls, 1, "runOnce joins the running tick");
  gate.resolve({});
  await ticked.promise;
  await joined;
  await started;
  ticker.stop();
});

test("onTick receives how long polling took on the clock", async () => {
  const clock = createManualClock();
  let pollMs = -1;
  const ticker = createTicker({
    clock,
    intervalMs: 1000,
    logger: silentLogger,
    poll: async () => {
      clock.advance(250);
      return {};
    },
    onTick: (_s, ms) => {
      pollMs = ms;
    },
  });
  await ticker.runOnce();
  assert.equal(pollMs, 250);
});

test("stop resolves only once a poll already under way has ended", async () => {
  const clock = createManualClock();
  const pollGate = deferred<MetricsSamples>();
  let pollStarted = deferred<void>();
  let first = true;
  const ticker = createTicker({
    clock,
    intervalMs: 1000,
    logger: silentLogger,
    poll: () => {
      if (first) {
        first = false;
        return Promise.resolve({});
      }
      pollStarted.resolve();
      return pollGate.promise;
    },
    onTick() {},
  });
  await ticker.start();
  pollStarted = deferred();
  clock.advance(1000);
  await pollStarted.promise;
  let stopped = false;
  const stopping = ticker.stop().then(() => {
    stopped = true;
  });
  await Promise.resolve();
  assert.equal(stopped, false, "stop must wait for the poll in flight");
  pollGate.resolve({});
  await stopping;
  assert.equal(stopped, true);
});

test("a tick that throws is logged and counted, and the next interval still ticks", async () => {
  const clock = createManualClock();
  const errors: unknown[] = [];
  const logged: string[] = [];
  let calls = 0;
  let tickSent = deferred<void>();
  const ticker = createTicker({
    clock,
    intervalMs: 1000,
    logger: { ...silentLogger, error: (msg: string) => logged.push(msg) },
    poll: async () => ({ "http://b0": sample }),
    onTick() {
      calls++;
      tickSent.resolve();
      if (calls === 1) throw new Error("core bug");
    },
    onError: (err) => errors.push(err),
  });
  await ticker.start();
  assert.equal(errors.length, 1);
  assert.deepEqual(logged, ["scheduler tick failed"]);
  tickSent = deferred();
  clock.advance(1000);
  await tickSent.promise;
  assert.equal(calls, 2, "the ticker did not stop");
  await ticker.stop();
});

test("ticks start one interval apart, counted from the previous start, not from its end", async () => {
  const clock = createManualClock(0);
  const starts: number[] = [];
  let tickSent = deferred<void>();
  const ticker = createTicker({
    clock,
    intervalMs: 1000,
    logger: silentLogger,
    poll: async () => {
      starts.push(clock.now());
      clock.advance(250); // the backends take a quarter of the interval to answer
      return {};
    },
    onTick: () => tickSent.resolve(),
  });
  await ticker.start();
  tickSent = deferred();
  clock.advance(750);
  await tickSent.promise;
  assert.deepEqual(starts, [0, 1000]);
  await ticker.stop();
});
