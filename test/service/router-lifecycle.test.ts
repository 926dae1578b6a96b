import assert from "node:assert/strict";
import { test } from "node:test";
import { createManualClock } from "../../src/runtime/clock.ts";
import { createInflightTracker } from "../../src/runtime/inflight-tracker.ts";
import { createRequestTable } from "../../src/runtime/request-table.ts";
import type { Ticker } from "../../src/runtime/ticker.ts";
import { createRouterLifecycle, createRouterPhase } from "../../src/service/router-lifecycle.ts";
import { silentLogger } from "../../src/util/logger.ts";

/** A lifecycle over parts that record what was done to them, in order. */
function lifecycleWith(drainMs = 10_000) {
  const clock = createManualClock(0);
  const done: string[] = [];
  const ticker: Ticker = {
    start: async () => {
      done.push("first tick");
    },
    stop: async () => {},
    runOnce: async () => {},
  };
  const phase = createRouterPhase();
  const inflight = createInflightTracker();
  const lifecycle = createRouterLifecycle({
    clock,
    logger: silentLogger,
    phase,
    pollTimeoutMs: 10_000,
    shutdownGraceMs: 30_000,
    drainMs,
    poller: { close: () => done.push("polls aborted") },
    rounds: {
      ticker,
      engineTicker: null,
      stop: async () => {
        done.push("ticks stopped");
      },
    },
    deadline: { cancel: () => done.push("deadline cancelled") },
    loop: { send: (event) => done.push(`event ${event.kind}`), requests: createRequestTable() },
    inflight,
    ui: { start: () => done.push("ui started"), stop: () => done.push("ui stopped") },
    release: async () => {
      done.push("released");
    },
    announce: (url) => done.push(`announced ${url}`),
  });
  return { clock, done, phase, inflight, lifecycle };
}

test("start runs the first tick, then starts the rest and announces it; a second start is the same", async () => {
  const { done, lifecycle } = lifecycleWith();
  const first = lifecycle.start();
  assert.equal(lifecycle.start(), first, "one start, however often it is asked for");
  await first;
  assert.deepEqual(done, ["first tick", "ui started", "announced null"]);
});

test("close stops the polls, the page and the ticks before the core hears of the shutdown, and releases last", async () => {
  const { done, phase, lifecycle } = lifecycleWith();
  await lifecycle.close();
  assert.equal(phase.current(), "stopping");
  assert.deepEqual(done, [
    "polls aborted",
    "ui stopped",
    "ticks stopped",
    "deadline cancelled",
    "event shutdown",
    "released",
  ]);
  await assert.rejects(lifecycle.start(), /closed before it started/);
});

test("drain refuses new programs until nothing is in flight, then closes", async () => {
  const { done, phase, inflight, lifecycle } = lifecycleWith();
  const end = inflight.begin();
  const drained = lifecycle.drain();
  assert.equal(phase.current(), "draining", "new programs are refused, the router's own go on");
  assert.ok(!done.includes("event shutdown"), "nothing is stopped while a request runs");
  end();
  await drained;
  assert.equal(phase.current(), "stopping");
  assert.equal(done.at(-1), "released");
});

test("with --drain 0 a drain is a close", async () => {
  const { phase, lifecycle } = lifecycleWith(0);
  await lifecycle.drain();
  assert.equal(phase.current(), "stopping");
  assert.equal(phase.refusingNew, false, "it never drained");
});
