import assert from "node:assert/strict";
import { test } from "node:test";
import { createPriorityHarness, prioritySnap } from "./priority-fixtures.ts";

// Capacity 10,000; a default program FILL takes 10,000 − `room`; programs need tokens + 100.
function withRoom(
  room: number,
  classes: Parameters<typeof createPriorityHarness>[0]["classes"] = {},
) {
  const h = createPriorityHarness({ capacity: 10_000, classes });
  h.arrive("f1", "FILL", 9900 - room);
  assert.equal(h.dispatchOf("f1")?.backendId, "b0");
  return h;
}

test("strict class order: freed room goes to a later interactive program before an older bulk one", () => {
  const h = withRoom(0);
  h.arrive("b1", "B", 900, { priorityClass: "bulk" });
  h.advance(100);
  h.arrive("i1", "I", 900, { priorityClass: "interactive" });
  h.tick({ b0: h.sample(11_000) }); // room for one
  assert.equal(h.dispatchOf("i1")?.backendId, "b0", "higher class first");
  assert.equal(h.dispatchOf("b1"), undefined, "older, but lower class");
  h.tick({ b0: h.sample(12_000) });
  assert.equal(h.dispatchOf("b1")?.backendId, "b0");
});

test("a new interactive program skips a queue that holds only lower classes", () => {
  const h = withRoom(2000);
  h.arrive("b1", "B", 2900, { priorityClass: "bulk" }); // need 3000 > 2000: queued
  h.arrive("i1", "I", 900, { priorityClass: "interactive" });
  assert.equal(h.dispatchOf("i1")?.pausedMs, 0, "placed at once");
  assert.equal(prioritySnap(h).classes.interactive.admissions.admitted, 1);
});

test("a waiting higher-class program that does not fit yet holds lower classes back", () => {
  const h = withRoom(1000);
  h.arrive("i1", "I", 2900, { priorityClass: "interactive" }); // need 3000: waits
  h.arrive("d1", "D", 400, { priorityClass: "default" }); // need 500 would fit
  assert.equal(h.dispatchOf("d1"), undefined, "default waits behind interactive");
  h.tick({ b0: h.sample(12_000) }); // room 3000: exactly interactive's need
  assert.equal(h.dispatchOf("i1")?.backendId, "b0");
  assert.equal(h.dispatchOf("d1"), undefined, "nothing left for default");
  h.tick({ b0: h.sample(12_500) });
  assert.equal(h.dispatchOf("d1")?.backendId, "b0");
});

test("within a class tr's skip-and-continue still applies: a smaller program passes a big one", () => {
  const h = withRoom(1000);
  h.arrive("b1", "B", 2900, { priorityClass: "bulk" });
  h.arrive("b2", "B2", 400, { priorityClass: "bulk" });
  assert.equal(h.dispatchOf("b1"), undefined);
  assert.equal(h.dispatchOf("b2")?.backendId, "b0");
});

test("starvation: a bulk head past its threshold is admitted next, into reserved-but-idle room", () => {
  const h = withRoom(2000, {
    interactive: { reservedShare: 0.1 }, // 1000 held from bulk
    bulk: { starvationMs: 5000 },
  });
  h.arrive("b1", "B", 1400, { priorityClass: "bulk" }); // need 1500 > 2000 − 1000 held
  assert.equal(h.scheduler.nextDeadline(), h.now + 5000, "the runtime may tick at the threshold");
  h.advance(1000);
  h.arrive("i1", "I", 2400, { priorityClass: "interactive" }); // need 2500 > 2000: waits
  h.advance(3999);
  h.tick();
  assert.equal(h.dispatchOf("b1"), undefined, "not starved yet");
  h.advance(1);
  h.tick();
  assert.equal(h.dispatchOf("b1")?.pausedMs, 5000, "promoted at its threshold");
  assert.equal(h.dispatchOf("i1"), undefined);
  assert.equal(prioritySnap(h).classes.bulk.promotions, 1);
});

test("starvation: the lowest class is checked first, and room for the next comes from bulk", () => {
  const h = withRoom(0, { default: { starvationMs: 5000 }, bulk: { starvationMs: 5000 } });
  h.arrive("d1", "D", 900, { priorityClass: "default" }); // older
  h.advance(10);
  h.arrive("b1", "B", 900, { priorityClass: "bulk" });
  h.advance(5000);
  h.tick({ b0: h.sample(11_000) }); // room for one: both heads are starved
  const order = h.dispatches.map((d) => d.requestId).filter((id) => id !== "f1");
  assert.deepEqual(order, ["b1"], "bulk, the class most at risk, first");
  assert.equal(h.program("B")?.markedForPause, true, "default's room is taken from bulk first");
  assert.equal(h.program("FILL")?.markedForPause, false);
  assert.equal(h.dispatchOf("d1"), undefined, "held until B's turn ends: never overfilled");
  h.usage("b1", 900);
  h.finish("b1"); // B's turn ends: paused, its room goes to the starved default head
  assert.equal(h.program("B")?.state, "PAUSED");
  assert.equal(h.dispatchOf("d1")?.backendId, "b0");
});

test("starvation: a starved head that does not fit gets room from its own class at once", () => {
  const h = withRoom(1000, { bulk: { starvationMs: 5000 } });
  h.arrive("b0", "B0", 1900, { priorityClass: "bulk" }); // need 2000 > 1000: waits
  h.tick({ b0: h.sample(12_000) }); // room 3000: B0 runs
  h.usage("b0", 1900);
  h.finish("b0"); // B0 ACTING, 2000 with its buffer
  h.arrive("b1", "B", 2900, { priorityClass: "bulk" }); // need 3000, room 1000: waits
  h.advance(5000);
  h.tick({ b0: h.sample(12_000) }); // starved; room 1000 + B0's 2000 freed
  assert.equal(h.dispatchOf("b1")?.pausedMs, 5000, "seated at its threshold, not later");
  assert.equal(h.program("B0")?.state, "PAUSED", "a bulk program gave way");
  assert.equal(h.program("FILL")?.state, "ACTIVE", "a higher class never gives way to bulk");
  assert.equal(prioritySnap(h).classes.bulk.promotions, 1);
});

test("starvation: with nothing of its class to pause, a starved head waits rather than overfill", () => {
  const h = withRoom(1000, { bulk: { starvationMs: 5000 } });
  h.arrive("b1", "B", 2900, { priorityClass: "bulk" }); // need 3000: waits
  h.advance(5000);
  h.tick(); // starved; only FILL (default) on b0, which bulk may not pause
  assert.equal(h.dispatchOf("b1"), undefined, "no backend is overfilled for it");
  assert.equal(h.program("FILL")?.markedForPause, false);
});
