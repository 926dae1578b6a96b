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

test("a frozen backend fails once per round and never gets a second poll on the wire", async () => {
  // Rounds every 5 s, polls time out after 10 s; the first unanswered poll goes out at 5 s.
  const clock = createManualClock(0);
  const stuck = frozen("stuck");
  const poller = pollerOf([stuck.client], clock, 10_000);
  const failures: number[] = [];
  const onLate = (_id: string, s: BackendMetricsSample | null) => {
    if (s === null) failures.push(clock.now());
  };
  for (let at = 5000; at <= 25_000; at += 5000) {
    clock.advance(at - clock.now());
    await settle(); // a poll that timed out now has failed before the round starts
    const round = poller.pollRound(1250, onLate);
    await settle();
    clock.advance(1250);
    if ((await round).stuck === null) failures.push(at);
  }
  // Still on the wire at 10 s; timed out at 15 s; the next still out at 20 s, timed out at 25 s.
  assert.deepEqual(failures, [10_000, 15_000, 20_000, 25_000]);
  assert.ok(failures[2] <= 5000 + 2 * 5000 + 10_000, "third failure within 2 intervals + timeout");
  assert.equal(stuck.answers.length, 3, "one poll at a time: sent at 5, 15 and 25 s");
});

test("a poll waiting for its turn in the queue is never counted against its backend", async () => {
  const clock = createManualClock(0);
  const stuck = frozen("stuck");
  const poller = pollerOf(
    [stuck.client, { backendId: "ok", poll: async () => sample(1) }],
    clock,
    10_000,
    1, // one poll on the wire: the healthy backend waits behind the frozen one
  );
  const seen: Array<[string, BackendMetricsSample | null]> = [];
  const onLate = (id: string, s: BackendMetricsSample | null) => seen.push([id, s]);
  for (let at = 0; at <= 10_000; at += 5000) {
    clock.advance(at - clock.now());
    await settle();
    const round = poller.pollRound(1250, onLate);
    await settle();
    clock.advance(1250);
    for (const [id, s] of Object.entries(await round)) seen.push([id, s]);
  }
  await settle();
  const ok = seen.filter(([id]) => id === "ok").map(([, s]) => s);
  assert.ok(ok.length > 0, "the healthy backend answered once its turn came");
  assert.ok(
    ok.every((s) => s !== null),
    `the healthy backend was never failed: ${JSON.stringify(ok)}`,
  );
  assert.ok(seen.some(([id, s]) => id === "stuck" && s === null));
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
