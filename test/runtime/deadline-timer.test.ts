import assert from "node:assert/strict";
import { test } from "node:test";
import { createManualClock } from "../../src/runtime/clock.ts";
import { createDeadlineTimer, MIN_DEADLINE_RETRY_MS } from "../../src/runtime/deadline-timer.ts";

function timerAt(deadline: { at: number | null }, stopping = { now: false }) {
  const clock = createManualClock(0);
  const ticks: number[] = [];
  const timer = createDeadlineTimer({
    clock,
    nextDeadline: () => deadline.at,
    tick: (now) => ticks.push(now),
    isStopping: () => stopping.now,
  });
  return { clock, ticks, timer };
}

test("a deadline gets its tick when due, and one its tick left standing is asked about again only after the retry delay", () => {
  const deadline = { at: 500 as number | null };
  const { clock, ticks, timer } = timerAt(deadline);
  timer.arm();
  clock.advance(499);
  assert.deepEqual(ticks, [], "not before it is due");
  clock.advance(1);
  assert.deepEqual(ticks, [500], "at the deadline");
  // The core chose not to act (the deadline still stands): no spin at the same instant.
  clock.advance(MIN_DEADLINE_RETRY_MS - 1);
  assert.deepEqual(ticks, [500], `got ${ticks.length} ticks, want 1: the retry waits`);
  clock.advance(1);
  assert.deepEqual(ticks, [500, 500 + MIN_DEADLINE_RETRY_MS]);
  deadline.at = null;
  clock.advance(10 * MIN_DEADLINE_RETRY_MS);
  assert.equal(ticks.length, 3, "one more tick, then nothing is due: nothing armed");
});

test("armIfEarlier re-arms for an earlier deadline and leaves a later one to the armed timer", () => {
  const deadline = { at: 1000 as number | null };
  const { clock, ticks, timer } = timerAt(deadline);
  timer.arm();
  deadline.at = 2000;
  timer.armIfEarlier();
  deadline.at = 300; // a request parked with a short max wait
  timer.armIfEarlier();
  clock.advance(300);
  assert.deepEqual(ticks, [300], "the earlier deadline's tick came first");
});

test("nothing is armed once shutdown began, and cancel drops the armed tick", () => {
  const stopping = { now: false };
  const { clock, ticks, timer } = timerAt({ at: 100 }, stopping);
  timer.arm();
  timer.cancel();
  clock.advance(200);
  assert.deepEqual(ticks, [], "cancelled");
  stopping.now = true;
  timer.arm();
  assert.equal(clock.pendingTimers(), 0, "a stopping router arms nothing");
});
