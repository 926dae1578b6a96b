import assert from "node:assert/strict";
import { test } from "node:test";
import { createHarness } from "./harness.ts";
import { createPriorityHarness } from "./priority-fixtures.ts";

/** b0's capacity unknown (no sample taught it): every arrival is held, nothing can be seated. */
function heldHarness() {
  return createHarness({ backends: ["b0"], config: { ageingMs: 60_000, maxPauseMs: 120_000 } });
}

test("position follows the resume order: smallest first among new programs, 1 = next", () => {
  const h = heldHarness();
  h.arrive("a1", "A", 300);
  h.advance(10);
  h.arrive("b1", "B", 100);
  h.advance(10);
  h.arrive("c1", "C", 200);
  h.advance(10);
  h.arrive("x1", null, 50); // a request without a program id is held like any program
  assert.equal(h.dispatches.length, 0);
  const order = h.scheduler.holds().map((v) => [v.requestId, v.position]);
  assert.deepEqual(order, [
    ["x1", 1],
    ["b1", 2],
    ["c1", 3],
    ["a1", 4],
  ]);
  const a = h.scheduler.holdOf({ programId: "A" });
  assert.ok(a);
  assert.equal(a.position, 4);
  assert.equal(a.waitingPrograms, 4);
  assert.equal(a.waitedMs, 30);
  assert.equal(a.parkedAt, 1_000);
  assert.equal(a.roomAt, 61_000, "the ageing bound makes room for it");
  assert.equal(a.roomBound, "ageing");
  assert.equal(a.seatAt, 121_000, "the max pause seats it at the latest");
  assert.equal(a.maxWaitAt, null);
  assert.equal(a.queueTimeoutAt, null);
  assert.equal(a.priorityClass, undefined, "no class while priorities are off");
  assert.equal(h.scheduler.holdOf({ requestId: "b1" })?.position, 2);
  assert.equal(h.scheduler.holdOf({ requestId: "x1" })?.programId.startsWith("anonymous"), true);
});

test("an overdue request comes first, as the resume pass makes room for it first", () => {
  const h = heldHarness();
  h.arrive("a1", "A", 300);
  h.advance(10);
  h.arrive("b1", "B", 100);
  h.advance(60_000 - 10);
  h.tick(); // time reaches the core with an event; nothing can be seated on b0
  assert.equal(h.dispatches.length, 0);
  assert.deepEqual(
    h.scheduler.holds().map((v) => [v.programId, v.position]),
    [
      ["A", 1],
      ["B", 2],
    ],
  );
  assert.equal(h.scheduler.holdOf({ programId: "A" })?.waitedMs, 60_000);
  assert.equal(h.scheduler.holdOf({ programId: "B" })?.position, 2);
});

test("not held: unknown ids, a seated request and a program with nothing held are null", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.arrive("s1", "S", 100);
  assert.ok(h.dispatchOf("s1"), "seated at once");
  assert.equal(h.scheduler.holdOf({ requestId: "s1" }), null);
  assert.equal(h.scheduler.holdOf({ programId: "S" }), null);
  assert.equal(h.scheduler.holdOf({ requestId: "nobody" }), null);
  assert.equal(h.scheduler.holdOf({ programId: "nobody" }), null);
  assert.deepEqual(h.scheduler.holds(), []);
});

test("ageing off: the max pause is the bound that makes room, and the client's max wait shows", () => {
  const h = createHarness({ backends: ["b0"], config: { ageingMs: 0, maxPauseMs: 90_000 } });
  h.arrive("a1", "A", 100, { maxWaitMs: 5_000 });
  const v = h.scheduler.holdOf({ requestId: "a1" });
  assert.equal(v?.roomBound, "max_pause");
  assert.equal(v?.roomAt, 91_000);
  assert.equal(v?.seatAt, 91_000);
  assert.equal(v?.maxWaitAt, 6_000);
});

test("priorities on: classes first, the class threshold makes room, the queue timeout shows", () => {
  const h = createPriorityHarness({
    capacity: 10_000,
    config: { maxPauseMs: 900_000 },
    classes: {
      bulk: { starvationMs: 300_000, queueTimeoutMs: 600_000 },
      interactive: { starvationMs: 5_000, queueTimeoutMs: 600_000 },
    },
  });
  h.arrive("f1", "FILL", 9900); // b0 is full: every later arrival queues
  h.arrive("bulk1", "BULK", 100, { priorityClass: "bulk" });
  h.advance(10);
  h.arrive("int1", "INT", 500, { priorityClass: "interactive" });
  const views = h.scheduler.holds();
  assert.deepEqual(
    views.map((v) => [v.programId, v.position, v.priorityClass]),
    [
      ["INT", 1, "interactive"],
      ["BULK", 2, "bulk"],
    ],
  );
  const bulk = views[1];
  assert.equal(bulk.roomBound, "class_threshold");
  assert.equal(bulk.roomAt, bulk.parkedAt + 300_000);
  assert.equal(bulk.seatAt, bulk.parkedAt + 900_000);
  assert.equal(bulk.queueTimeoutAt, bulk.parkedAt + 600_000);
  // Both starved: the lowest class is considered first, before the classes that keep
  // overtaking it.
  h.advance(300_000);
  h.tick({ b0: h.sample(10_000, { kvUsage: 0.99, waiting: 1, running: 1 }) });
  assert.equal(h.scheduler.holdOf({ programId: "BULK" })?.position, 1);
  assert.equal(h.scheduler.holdOf({ programId: "INT" })?.position, 2);
});
