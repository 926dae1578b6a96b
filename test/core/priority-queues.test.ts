import assert from "node:assert/strict";
import { test } from "node:test";
import { createPriorityHarness, prioritySnap } from "./priority-fixtures.ts";

/** b0 full of one default program (need 10,000), so every later arrival queues. */
function fullHarness(classes: Parameters<typeof createPriorityHarness>[0]["classes"]) {
  const h = createPriorityHarness({ capacity: 10_000, classes });
  h.arrive("f1", "FILL", 9900);
  assert.equal(h.dispatchOf("f1")?.backendId, "b0");
  return h;
}

test("a full class queue rejects the next arrival at once with 429 queue_full", () => {
  const h = fullHarness({ bulk: { queueDepth: 1 } });
  h.arrive("x1", "X", 100, { priorityClass: "bulk" });
  h.arrive("y1", "Y", 100, { priorityClass: "bulk" });
  h.arrive("d1", "D", 100, { priorityClass: "default" }); // another class: its own queue
  const rej = h.rejectOf("y1");
  assert.equal(rej?.error.status, 429);
  assert.equal(rej?.error.code, "queue_full");
  assert.equal(rej?.error.headers["retry-after"], "1");
  assert.equal(h.rejectOf("x1"), undefined, "the first bulk request waits");
  assert.equal(h.rejectOf("d1"), undefined, "default's queue is separate");
  assert.equal(h.program("Y"), undefined, "a program refused on arrival is never created");
  const s = prioritySnap(h).classes;
  assert.equal(s.bulk.admissions.queue_full, 1);
  assert.equal(s.bulk.admissions.queued, 1);
  assert.equal(s.bulk.queued, 1);
});

test("a request parked past its class timeout gets 408 queue_timeout at the next tick", () => {
  const h = fullHarness({ bulk: { queueTimeoutMs: 10_000, starvationMs: 60_000 } });
  h.arrive("x1", "X", 100, { priorityClass: "bulk" });
  assert.equal(h.scheduler.nextDeadline(), h.now + 10_000, "the runtime may tick at the timeout");
  h.advance(9_999);
  h.tick();
  assert.equal(h.rejectOf("x1"), undefined, "not yet");
  h.advance(1);
  h.tick();
  const rej = h.rejectOf("x1");
  assert.equal(rej?.error.status, 408);
  assert.equal(rej?.error.code, "queue_timeout");
  assert.equal(prioritySnap(h).classes.bulk.admissions.queue_timeout, 1);
  assert.equal(h.scheduler.snapshot().queueLength, 0);
});

test("a client that disconnects while queued leaves the queue at once and counts as 499", () => {
  const h = fullHarness({});
  h.arrive("x1", "X", 100, { priorityClass: "bulk" });
  h.arrive("x2", "X2", 100, { priorityClass: "bulk" });
  h.finish("x1", "client_closed");
  const s = prioritySnap(h).classes.bulk;
  assert.equal(s.queued, 1, "only x2 still waits");
  assert.equal(s.admissions.client_closed, 1);
  h.tick({ b0: h.sample(20_000) });
  assert.equal(h.dispatchOf("x1"), undefined, "a gone client is never dispatched");
  assert.equal(h.dispatchOf("x2")?.backendId, "b0");
});

test("queue waits are observed by class and drained once", () => {
  const h = fullHarness({});
  h.arrive("x1", "X", 100, { priorityClass: "bulk" });
  h.advance(500);
  h.arrive("i1", "I", 100, { priorityClass: "interactive" });
  h.advance(250);
  h.tick({ b0: h.sample(20_000) });
  const waits = h.scheduler.drainQueueWaitObservations();
  assert.deepEqual(
    [...waits].sort((a, b) => a.ms - b.ms),
    [
      { priorityClass: "interactive", ms: 250 },
      { priorityClass: "bulk", ms: 750 },
    ],
  );
  assert.deepEqual(h.scheduler.drainQueueWaitObservations(), []);
  assert.deepEqual(h.scheduler.drainPauseObservations().length, 2, "pause observations still kept");
});

test("admissions count admitted and queued arrivals, and the tenant clamps, by class", () => {
  const h = createPriorityHarness({ capacity: 10_000 });
  h.arrive("a1", "A", 100, { priorityClass: "bulk", classClamped: true });
  h.arrive("a2", "A2", 9800, { priorityClass: "bulk" }); // need 9900 > the 9800 left
  const s = prioritySnap(h).classes.bulk;
  assert.equal(s.admissions.admitted, 1);
  assert.equal(s.admissions.queued, 1);
  assert.equal(s.clamps, 1);
});
