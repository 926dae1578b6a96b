import assert from "node:assert/strict";
import { test } from "node:test";
import { createBackendPoller } from "../../src/backends/backend-poller.ts";
import type { BackendMetricsClient } from "../../src/backends/metrics-client.ts";
import type { BackendMetricsSample } from "../../src/core/events.ts";
import { createManualClock } from "../../src/runtime/clock.ts";
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

function pollerOf(
  clients: BackendMetricsClient[],
  clock: ReturnType<typeof createManualClock>,
  timeoutMs: number,
  concurrency = 8,
) {
  return createBackendPoller({ clients, concurrency, timeoutMs, clock, logger: silentLogger });
}

/** Lets settled promise callbacks run (the polls' `.then`s), without moving the clock. */
const settle = () => new Promise<void>((r) => setImmediate(r));

/** A poll that answers only when aborted (its timeout) or when the test calls `answer`. */
function frozen(backendId: string) {
  const answers: Array<(s: BackendMetricsSample) => void> = [];
  const client: BackendMetricsClient = {
    backendId,
    poll: (signal) =>
      new Promise((resolve, reject) => {
        answers.push(resolve);
        signal.addEventListener("abort", () => reject(signal.reason));
      }),
  };
  return { client, answers };
}

test("a failing backend is null in the round while the others report", async () => {
  const clock = createManualClock(7);
  const clients: BackendMetricsClient[] = [
    { backendId: "a", poll: async () => sample(1) },
    { backendId: "b", poll: async () => Promise.reject(new Error("ECONNREFUSED")) },
  ];
  const poller = createBackendPoller({
    clients,
    concurrency: 4,
    timeoutMs: 1000,
    clock,
    logger: silentLogger,
  });
  assert.deepEqual(await poller.pollRound(1000, () => {}), { a: sample(1), b: null });
  assert.deepEqual(poller.latest("a"), { sample: sample(1), at: 7 });
  assert.equal(poller.latest("b"), undefined);
  assert.equal(clock.pendingTimers(), 0, "the round's wait and the polls' timeouts are cancelled");
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
    clock: createManualClock(),
    logger: silentLogger,
  });
  const all = poller.pollRound(60_000);
  // Release polls as they start, one by one, until all five have answered.
  for (let done = 0; done < 5; done++) {
    while (release.length === 0) await settle();
    release.shift()?.();
  }
  const result = await all;
  assert.equal(peak, 2, `got ${peak} concurrent polls, want at most 2`);
  assert.equal(Object.keys(result).length, 5);
});

test("a slow backend does not hold the round: its answer comes later, on its own", async () => {
  const clock = createManualClock();
  const slow = frozen("slow");
  const poller = pollerOf(
    [{ backendId: "fast", poll: async () => sample(1) }, slow.client],
    clock,
    10_000,
    8,
  );
  const late: Array<[string, BackendMetricsSample | null]> = [];
  const round = poller.pollRound(1250, (id, s) => late.push([id, s]));
  await settle();
  clock.advance(1250);
  assert.deepEqual(await round, { fast: sample(1) }, "the round ends at its wait");
  slow.answers[0]?.(sample(9));
  await settle();
  assert.deepEqual(late, [["slow", sample(9)]]);
  assert.deepEqual(poller.latest("slow")?.sample, sample(9));
});

test("a frozen backend fails once per round, each poll at its own timeout", async () => {
  // Rounds every 5 s, timeout 10 s: the failures land at 10, 15 and 20 s (two intervals plus
  // the timeout for the third), not at 10, 25 and 40 s as with polls one after another.
  const clock = createManualClock(0);
  const stuck = frozen("stuck");
  const poller = pollerOf([stuck.client], clock, 10_000, 8);
  const failures: number[] = [];
  const onLate = (_id: string, s: BackendMetricsSample | null) => {
    if (s === null) failures.push(clock.now());
  };
  for (let round = 0; round < 3; round++) {
    const r = poller.pollRound(1250, onLate);
    await settle();
    clock.advance(1250);
    assert.deepEqual(await r, {});
    await settle();
    clock.advance(3750);
    await settle();
  }
  clock.advance(5000);
  await settle();
  clock.advance(5000);
  await settle();
  assert.deepEqual(failures, [10_000, 15_000, 20_000]);
});

test("an answer older than one already delivered is dropped, not delivered over it", async () => {
  const clock = createManualClock();
  const b = frozen("b");
  const poller = pollerOf([b.client], clock, 60_000, 8);
  const late: Array<BackendMetricsSample | null> = [];
  const first = poller.pollRound(100, (_id, s) => late.push(s));
  await settle();
  clock.advance(100);
  await first;
  const second = poller.pollRound(100, (_id, s) => late.push(s));
  await settle();
  b.answers[1]?.(sample(2)); // the newer poll answers first, within its round
  await settle();
  assert.deepEqual(await second, { b: sample(2) });
  b.answers[0]?.(sample(1)); // then the older one
  await settle();
  assert.deepEqual(late, [], "the older figure never reaches the core");
  assert.deepEqual(poller.latest("b")?.sample, sample(2));
});

test("close aborts the polls still out and ends their rounds; nothing is delivered after it", async () => {
  const clock = createManualClock();
  const b = frozen("b");
  const poller = pollerOf([b.client], clock, 60_000, 8);
  const late: unknown[] = [];
  const round = poller.pollRound(60_000, (_id, s) => late.push(s));
  await settle();
  poller.close();
  assert.deepEqual(await round, {});
  await settle();
  assert.deepEqual(late, []);
  assert.equal(clock.pendingTimers(), 0);
});
