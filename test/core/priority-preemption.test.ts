import assert from "node:assert/strict";
import { test } from "node:test";
import type { PriorityClass } from "../../src/core/api.ts";
import { createPriorityHarness, type PriorityHarness, prioritySnap } from "./priority-fixtures.ts";

// Capacity 10,000, no reservations; programs need tokens + 100. Preemption on for the top two.
function harness() {
  return createPriorityHarness({
    capacity: 10_000,
    classes: { system: { preempt: true }, interactive: { preempt: true } },
  });
}

function turn(h: PriorityHarness, id: string, cls: PriorityClass, tokens: number) {
  h.arrive(`${id}-1`, id, tokens, { priorityClass: cls });
  h.usage(`${id}-1`, tokens);
  h.finish(`${id}-1`);
}

test("no room for interactive: the most recently admitted ACTING program of the lowest class is paused", () => {
  const h = harness();
  turn(h, "A", "bulk", 3900);
  turn(h, "B", "bulk", 2900);
  turn(h, "D", "default", 2900); // admitted last, but a higher class than bulk
  h.arrive("i1", "I", 900, { priorityClass: "interactive" });
  assert.equal(h.program("B")?.state, "PAUSED", "bulk, most recently admitted");
  assert.equal(h.program("A")?.state, "ACTIVE");
  assert.equal(h.program("D")?.state, "ACTIVE");
  assert.equal(h.dispatchOf("i1")?.pausedMs, 0, "seated at once");
  assert.equal(h.cancels.length, 0, "an ACTING victim has no request to cancel");
  assert.equal(prioritySnap(h).classes.bulk.preemptions, 1);
});

test("a request before its first byte is cancelled with 503 preempted and its program paused", () => {
  const h = harness();
  h.arrive("a1", "A", 9900, { priorityClass: "bulk" }); // in flight, nothing streamed
  h.arrive("i1", "I", 900, { priorityClass: "interactive" });
  assert.equal(h.cancels.length, 1);
  const { requestId, error } = h.cancels[0];
  assert.equal(requestId, "a1");
  assert.equal(error.status, 503);
  assert.equal(error.code, "preempted");
  assert.deepEqual(error.headers, { "retry-after": "1", "x-maitred-preempted": "true" });
  assert.equal(h.program("A")?.state, "PAUSED");
  assert.equal(h.dispatchOf("i1")?.backendId, "b0");
  assert.equal(h.scheduler.tryCommitFirstByte("a1"), false, "its first byte must not be written");
  assert.equal(prioritySnap(h).classes.bulk.admissions.preempted, 1);
  h.finish("a1", "cancelled"); // the adapter's end of the cancelled request changes nothing
  assert.equal(h.backend("b0").usedTokens, 1000, "only I is on the books");
  assert.equal(h.program("A")?.inFlight, 0);
});

test("a request whose first byte was committed is never preempted: interactive waits", () => {
  const h = harness();
  h.arrive("a1", "A", 9900, { priorityClass: "bulk" });
  assert.equal(h.scheduler.tryCommitFirstByte("a1"), true);
  h.arrive("i1", "I", 900, { priorityClass: "interactive" });
  assert.equal(h.cancels.length, 0);
  assert.equal(h.program("A")?.state, "ACTIVE");
  assert.equal(h.dispatchOf("i1"), undefined, "queued instead");
});

test("the first-token event commits too", () => {
  const h = harness();
  h.arrive("a1", "A", 9900, { priorityClass: "bulk" });
  h.scheduler.handle({ kind: "request_first_token", now: h.now, requestId: "a1" });
  h.arrive("i1", "I", 900, { priorityClass: "interactive" });
  assert.equal(h.cancels.length, 0);
});

test("at most one victim, and only one whose tokens make the request fit", () => {
  const h = harness();
  turn(h, "S", "system", 8900); // not a lower class than anything
  turn(h, "X", "bulk", 400); // frees 500
  turn(h, "Y", "bulk", 400); // frees 500
  h.arrive("i1", "I", 900, { priorityClass: "interactive" }); // needs 1000
  assert.equal(h.program("X")?.state, "ACTIVE", "no single victim frees enough: none is taken");
  assert.equal(h.program("Y")?.state, "ACTIVE");
  assert.equal(h.dispatchOf("i1"), undefined);
  h.arrive("j1", "J", 400, { priorityClass: "interactive" }); // needs 500: one victim will do
  assert.equal(h.dispatchOf("j1")?.backendId, "b0");
  assert.deepEqual(
    ["X", "Y"].map((id) => h.program(id)?.state),
    ["ACTIVE", "PAUSED"],
    "exactly one, the most recent",
  );
});

test("default and bulk never preempt: they queue", () => {
  const h = harness();
  turn(h, "A", "bulk", 9900);
  h.arrive("d1", "D", 900, { priorityClass: "default" });
  assert.equal(h.program("A")?.state, "ACTIVE");
  assert.equal(h.dispatchOf("d1"), undefined);
});

test("system preempts interactive, and a paused interactive program preempts bulk to come back", () => {
  const h = harness();
  turn(h, "S", "system", 4900);
  turn(h, "I", "interactive", 1900);
  h.tick({ b0: h.sample(6999) }); // 1 over: interactive is the only candidate
  assert.equal(h.program("I")?.state, "PAUSED");
  turn(h, "B", "bulk", 1899); // takes the 1999 left
  h.tick({ b0: h.sample(7500) }); // 500 free: not enough for I (2000)
  assert.equal(h.program("I")?.state, "PAUSED");
  h.arrive("i2", "I", 1900, { priorityClass: "interactive" });
  assert.equal(h.program("B")?.state, "PAUSED", "bulk gave way");
  assert.equal(h.dispatchOf("i2")?.pausedMs, 0, "the paused program resumed at once");
  h.arrive("s2", "S2", 2400, { priorityClass: "system" }); // needs 2500, 500 free
  assert.equal(h.program("I")?.state, "PAUSED", "system preempts interactive");
  assert.equal(h.cancels[0]?.requestId, "i2", "i2 had not streamed: cancelled");
});
