import assert from "node:assert/strict";
import { test } from "node:test";
import { createManualClock } from "../../src/runtime/clock.ts";

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
