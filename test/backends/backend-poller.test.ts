import assert from "node:assert/strict";
import { test } from "node:test";
import { createBackendPoller } from "../../src/backends/backend-poller.ts";
import type { BackendMetricsClient } from "../../src/backends/metrics-client.ts";
import type { BackendMetricsSample } from "../../src/core/events.ts";
import { createManualClock } from "../../src/runtime/clock.ts";
import { createLogger, silentLogger } from "../../src/util/logger.ts";

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

type Late = Array<[number, string, BackendMetricsSample]>;

function pollerOf(
  clients: BackendMetricsClient[],
  clock: ReturnType<typeof createManualClock>,
  timeoutMs: number,
  concurrency = 8,
  late: Late = [],
) {
  return createBackendPoller({
    clients,
    concurrency,
    timeoutMs,
    clock,
    logger: silentLogger,
    onLate: (id, sample) => late.push([clock.now(), id, sample]),
  });
}

/**
 * Counted rounds every 5 s from `from` to `to` (each waiting 1.25 s), as the scheduler's ticker
 * runs them; returns what each reported, with its start time.
 */
async function rounds(
  poller: ReturnType<typeof createBackendPoller>,
  clock: ReturnType<typeof createManualClock>,
  from: number,
  to: number,
): Promise<Array<[number, Record<string, BackendMetricsSample | null>]>> {
  const reported: Array<[number, Record<string, BackendMetricsSample | null>]> = [];
  for (let at = from; at <= to; at += 5000) {
    clock.advance(at - clock.now());
    await settle(); // a poll that timed out has failed before the round starts
    const round = poller.pollRound(1250, true);
    await settle();
    clock.advance(1250);
    reported.push([at, await round]);
  }
  return reported;
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
  const poller = pollerOf(clients, clock, 1000, 4);
  assert.deepEqual(await poller.pollRound(1000, true), { a: sample(1), b: null });
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
  const poller = pollerOf(clients, createManualClock(), 60_000, 2);
  const all = poller.pollRound(60_000, true);
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
  const late: Late = [];
  const poller = pollerOf(
    [{ backendId: "fast", poll: async () => sample(1) }, slow.client],
    clock,
    10_000,
    8,
    late,
  );
  const round = poller.pollRound(1250, true);
  await settle();
  clock.advance(1250);
  assert.deepEqual(await round, { fast: sample(1) }, "the round ends at its wait");
  slow.answers[0]?.(sample(9));
  await settle();
  assert.deepEqual(late, [[1250, "slow", sample(9)]]);
  assert.deepEqual(poller.latest("slow")?.sample, sample(9));
});

test("a frozen backend fails once per round, one poll on the wire at a time", async () => {
  // Polls time out after 10 s; the first one it leaves unanswered goes out at 5 s.
  const clock = createManualClock(0);
  const stuck = frozen("stuck");
  const poller = pollerOf([stuck.client], clock, 10_000);
  const reported = await rounds(poller, clock, 5000, 25_000);
  const failures = reported.filter(([, r]) => r.stuck === null).map(([at]) => at);
  assert.deepEqual(failures, [10_000, 15_000, 20_000, 25_000]);
  assert.ok(failures[2] <= 5000 + 2 * 5000 + 10_000, "third failure within 2 intervals + timeout");
  assert.equal(stuck.answers.length, 3, "sent at 5, 15 and 25 s: never two at once");
});

test("a slow /metrics is reported failed, then answered; never failed after its answer", async () => {
  // It answers each poll 5.5 s after it went out: later than a round, within the timeout.
  const clock = createManualClock(0);
  const slow = frozen("slow");
  const late: Late = [];
  const poller = pollerOf([slow.client], clock, 10_000, 8, late);
  const first = poller.pollRound(1250, true);
  await settle();
  clock.advance(1250);
  assert.deepEqual(await first, {});
  clock.advance(5000 - clock.now());
  const second = await poller.pollRound(1250, true); // on the wire 5 s: silent
  assert.deepEqual(second, { slow: null });
  clock.advance(500);
  slow.answers[0]?.(sample(3));
  await settle();
  assert.deepEqual(late, [[5500, "slow", sample(3)]], "the answer follows the failure");
});

test("a poll waiting for its turn in the queue is never counted against its backend", async () => {
  const clock = createManualClock(0);
  const stuck = frozen("stuck");
  const late: Late = [];
  const poller = pollerOf(
    [stuck.client, { backendId: "ok", poll: async () => sample(1) }],
    clock,
    10_000,
    1, // one poll on the wire: the healthy backend waits behind the frozen one
    late,
  );
  const reported = await rounds(poller, clock, 0, 15_000);
  await settle();
  const ok = [
    ...reported.flatMap(([, r]) => ("ok" in r ? [r.ok] : [])),
    ...late.filter(([, id]) => id === "ok").map(([, , s]) => s),
  ];
  assert.ok(ok.length > 0, "the healthy backend answered once its turn came");
  assert.ok(
    ok.every((s) => s !== null),
    `never failed: ${JSON.stringify(ok)}`,
  );
  assert.ok(reported.some(([, r]) => r.stuck === null));
});

test("uncounted rounds (the --metrics refresh) never put a second poll of a backend on the wire", async () => {
  const clock = createManualClock(0);
  const stuck = frozen("stuck");
  const poller = pollerOf([stuck.client], clock, 10_000);
  for (let i = 0; i < 5; i++) {
    const round = poller.pollRound(1000, false);
    await settle();
    clock.advance(1000);
    assert.deepEqual(await round, {});
  }
  assert.equal(stuck.answers.length, 1);
});

test("close aborts the polls still out and ends their rounds; nothing is delivered after it", async () => {
  const clock = createManualClock();
  const b = frozen("b");
  const late: Late = [];
  const poller = pollerOf([b.client], clock, 60_000, 8, late);
  const round = poller.pollRound(60_000, true);
  await settle();
  poller.close();
  assert.deepEqual(await round, {});
  await settle();
  assert.deepEqual(late, []);
  assert.equal(clock.pendingTimers(), 0);
});

test("a backend that stays down is logged once when it goes down and once when it answers again, each one line with no stack", async () => {
  const clock = createManualClock(0);
  let up = false;
  const lines: string[] = [];
  const poller = createBackendPoller({
    clients: [
      {
        backendId: "b",
        poll: async () => {
          if (!up) throw new Error("fetch failed", { cause: new Error("connect ECONNREFUSED") });
          return sample(0);
        },
      },
    ],
    concurrency: 4,
    timeoutMs: 1000,
    clock,
    logger: createLogger({ level: "info", write: (l) => lines.push(l) }),
  });
  for (let i = 0; i < 5; i++) {
    await poller.pollRound(1000, true);
    clock.advance(5000);
  }
  up = true;
  await poller.pollRound(1000, true);
  await poller.pollRound(1000, true);
  const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    logged.map((l) => [l.level, l.msg, l.error ?? null, l.outMs ?? null]),
    [
      [
        "warn",
        "backend metrics poll failed; said again when it answers",
        "fetch failed: connect ECONNREFUSED",
        null,
      ],
      ["info", "backend metrics answer again", null, 25000],
    ],
    `got ${lines.join("\n")}`,
  );
  assert.ok(
    lines.every((l) => !l.includes("stack") && !l.includes("\\n    at ")),
    "no stack trace",
  );
});
