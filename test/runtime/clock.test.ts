import assert from "node:assert/strict";
import { test } from "node:test";
import { createManualClock, createVirtualClock } from "../../src/runtime/clock.ts";

test("a manual clock fires due timers in time order, each at its due time", () => {
  const clock = createManualClock(1000);
  const fired: Array<[string, number]> = [];
  clock.setTimeout(() => fired.push(["b", clock.now()]), 200);
  clock.setTimeout(() => fired.push(["a", clock.now()]), 100);
  clock.setTimeout(() => fired.push(["late", clock.now()]), 500);
  clock.advance(300);
  assert.deepEqual(fired, [
    ["a", 1100],
    ["b", 1200],
  ]);
  assert.equal(clock.now(), 1300);
  assert.equal(clock.pendingTimers(), 1);
});

test("a cancelled timer never fires, and a timer set by a timer fires within the same advance", () => {
  const clock = createManualClock();
  const fired: string[] = [];
  const t = clock.setTimeout(() => fired.push("cancelled"), 10);
  t.cancel();
  clock.setTimeout(() => {
    fired.push("first");
    clock.setTimeout(() => fired.push("chained"), 10);
  }, 10);
  clock.advance(25);
  assert.deepEqual(fired, ["first", "chained"]);
  assert.equal(clock.pendingTimers(), 0);
});

test("flush fires what is due now, and nextDue names the earliest pending timer", () => {
  const clock = createManualClock(50);
  const fired: string[] = [];
  clock.setTimeout(() => fired.push("later"), 30);
  clock.setTimeout(() => fired.push("now"), 0);
  assert.equal(clock.nextDue(), 50);
  clock.flush();
  assert.deepEqual(fired, ["now"]);
  assert.equal(clock.now(), 50, "flush does not move time");
  assert.equal(clock.nextDue(), 80);
  clock.advance(30);
  assert.equal(clock.nextDue(), null);
});

test("uses() counts every read, set and cancel of the clock", () => {
  const clock = createManualClock();
  const before = clock.uses();
  clock.now();
  clock.setTimeout(() => {}, 5).cancel();
  assert.equal(clock.uses() - before, 3);
});

/** Resolves after `turns` turns of the event loop (work that does not touch the clock). */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

test("a virtual clock jumps from timer to timer by itself, each firing at its due time", async () => {
  const clock = createVirtualClock(1000);
  try {
    const fired: number[] = [];
    const done = new Promise<void>((resolve) => {
      clock.setTimeout(() => fired.push(clock.now()), 60_000);
      clock.setTimeout(() => {
        fired.push(clock.now());
        clock.setTimeout(() => {
          fired.push(clock.now());
          resolve();
        }, 3_600_000);
      }, 5);
    });
    await done;
    assert.deepEqual(fired, [1005, 61_000, 3_601_005]);
    assert.equal(clock.pendingTimers(), 0);
  } finally {
    clock.stop();
  }
});

test("a virtual clock waits until the process has settled before it jumps", async () => {
  const clock = createVirtualClock(0, 20);
  try {
    const order: string[] = [];
    const far = new Promise<void>((resolve) =>
      clock.setTimeout(() => {
        order.push(`far@${clock.now()}`);
        resolve();
      }, 100),
    );
    // Work in flight (as a request crossing a socket is): a few quiet turns, then it reads
    // the clock and sets a nearer timer. The clock must not have jumped meanwhile.
    await turns(5);
    order.push(`work@${clock.now()}`);
    await turns(15);
    const near = new Promise<void>((resolve) =>
      clock.setTimeout(() => {
        order.push(`near@${clock.now()}`);
        resolve();
      }, 10),
    );
    await Promise.all([near, far]);
    assert.deepEqual(order, ["work@0", "near@10", "far@100"]);
  } finally {
    clock.stop();
  }
});

test("a stopped virtual clock no longer moves by itself, but can still be advanced", async () => {
  const clock = createVirtualClock();
  let fired = false;
  clock.setTimeout(() => {
    fired = true;
  }, 10);
  clock.stop();
  await turns(50);
  assert.equal(fired, false);
  assert.equal(clock.now(), 0);
  clock.advance(10);
  assert.equal(fired, true);
});
