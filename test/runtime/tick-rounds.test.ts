import assert from "node:assert/strict";
import { test } from "node:test";
import type { SchedulerEvent } from "../../src/core/events.ts";
import { createManualClock } from "../../src/runtime/clock.ts";
import { createTickRounds, type TickRoundsOptions } from "../../src/runtime/tick-rounds.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { sample } from "../core/harness.ts";

const SAMPLE = sample(1000, { kvUsage: 0, running: 0, waiting: 0 });

function rounds(extra: Partial<TickRoundsOptions> = {}) {
  const clock = createManualClock(0);
  const polls: Array<{ waitMs: number; counted: boolean }> = [];
  const sent: SchedulerEvent[] = [];
  const errors: unknown[] = [];
  const state = { stopping: false, ticked: 0 };
  const r = createTickRounds({
    clock,
    logger: silentLogger,
    intervalMs: 4000,
    pollTimeoutMs: 10_000,
    pollRound: async (waitMs, counted) => {
      polls.push({ waitMs, counted });
      return { b: SAMPLE };
    },
    send: (event) => sent.push(event),
    isStopping: () => state.stopping,
    onTicked: () => state.ticked++,
    onError: (err) => errors.push(err),
    ...extra,
  });
  return { clock, polls, sent, errors, state, r };
}

test("the first round waits the poll timeout for every backend, later ones a quarter of the interval", async () => {
  const { polls, sent, state, r } = rounds();
  await r.ticker.start();
  await r.ticker.runOnce();
  assert.deepEqual(
    polls.map((p) => p.waitMs),
    [10_000, 1000],
    "got the rounds' waits; want the poll timeout, then 25 % of the 4 s interval",
  );
  assert.ok(
    polls.every((p) => p.counted),
    "the scheduler's rounds count against health",
  );
  assert.deepEqual(
    sent.map((e) => e.kind),
    ["tick", "tick"],
  );
  assert.equal(state.ticked, 2, "each tick re-arms the deadline timer");
  assert.equal(r.engineTicker, null, "no engine ticker without --metrics");
  await r.stop();
});

test("a round that ends after shutdown began tells the core nothing", async () => {
  const { sent, state, r } = rounds();
  state.stopping = true;
  await r.ticker.runOnce();
  assert.deepEqual(sent, []);
  assert.equal(state.ticked, 0);
});

test("a late sample is a tick of its own until shutdown, and one that throws is counted, not thrown", () => {
  const { sent, state, r } = rounds();
  r.deliverLate("b", SAMPLE);
  assert.deepEqual(sent, [{ kind: "tick", now: 0, metrics: { b: SAMPLE } }]);
  assert.equal(state.ticked, 1);
  state.stopping = true;
  r.deliverLate("b", SAMPLE);
  assert.equal(sent.length, 1, "after shutdown began, late figures come too late");

  const failing = rounds({
    send: () => {
      throw new Error("core bug");
    },
  });
  failing.r.deliverLate("b", SAMPLE);
  assert.equal(failing.errors.length, 1, "the failure reaches onError (the metrics count it)");
});

test("with --metrics an engine ticker polls uncounted rounds and tells the core nothing", async () => {
  const { polls, sent, r } = rounds({ engineIntervalMs: 1000 });
  assert.ok(r.engineTicker !== null);
  await r.engineTicker.runOnce();
  assert.deepEqual(polls, [{ waitMs: 10_000, counted: false }]);
  assert.deepEqual(sent, []);
  await r.stop();
});
