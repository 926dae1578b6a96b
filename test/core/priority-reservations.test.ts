import assert from "node:assert/strict";
import { test } from "node:test";
import { createPriorityHarness, prioritySnap } from "./priority-fixtures.ts";

// Capacity 10,000 and 100 tokens of buffer per program: a program of t tokens needs t + 100.

test("a higher class's unused reservation is held back from lower classes", () => {
  const h = createPriorityHarness({
    capacity: 10_000,
    classes: { interactive: { reservedShare: 0.2 } },
  });
  h.arrive("a1", "A", 4900, { priorityClass: "bulk" }); // need 5000 of 8000 bulk may take
  h.arrive("b1", "B", 3400, { priorityClass: "bulk" }); // need 3500 > 10,000 − 5000 − 2000 held
  assert.equal(h.dispatchOf("a1")?.backendId, "b0");
  assert.equal(h.dispatchOf("b1"), undefined, "bulk may not take interactive's idle reservation");
  const room = prioritySnap(h).backends[0].classes.interactive;
  assert.deepEqual(room, { reservedTokens: 2000, usedTokens: 0, heldTokens: 2000 });
});

test("once the higher class uses its reserved room the hold shrinks one for one", () => {
  const h = createPriorityHarness({
    capacity: 10_000,
    classes: { interactive: { reservedShare: 0.2 } },
  });
  h.arrive("a1", "A", 4900, { priorityClass: "bulk" }); // used 5000: raw room 5000, bulk 3000
  h.arrive("i1", "I", 900, { priorityClass: "interactive" }); // uses 1000 of its 2000
  let room = prioritySnap(h).backends[0].classes.interactive;
  assert.deepEqual(room, { reservedTokens: 2000, usedTokens: 1000, heldTokens: 1000 });
  h.arrive("b1", "B", 2900, { priorityClass: "bulk" }); // need 3000 = 4000 raw − 1000 held
  assert.equal(h.dispatchOf("b1")?.backendId, "b0", "bulk room unchanged by interactive's use");
  h.arrive("j1", "J", 900, { priorityClass: "interactive" }); // 2000 used: the hold is gone
  room = prioritySnap(h).backends[0].classes.interactive;
  assert.deepEqual(room, { reservedTokens: 2000, usedTokens: 2000, heldTokens: 0 });
  assert.equal(h.backend("b0").remainingTokens, 0);
});

test("a class's own reservation never counts against it", () => {
  const h = createPriorityHarness({
    capacity: 10_000,
    classes: { interactive: { reservedShare: 0.2 } },
  });
  h.arrive("a1", "A", 7900, { priorityClass: "bulk" }); // exactly the 8000 bulk may take
  h.arrive("d1", "D", 100, { priorityClass: "default" }); // held back: queued
  h.arrive("i1", "I", 1900, { priorityClass: "interactive" }); // exactly the 2000 left
  assert.equal(h.dispatchOf("a1")?.backendId, "b0");
  assert.equal(h.dispatchOf("d1"), undefined, "default is a lower class: held back");
  assert.equal(h.dispatchOf("i1")?.backendId, "b0", "interactive takes its own reserved room");
});

test("holds stack: interactive is held back by system's idle reservation only", () => {
  const h = createPriorityHarness({
    capacity: 10_000,
    classes: { system: { reservedShare: 0.1 }, interactive: { reservedShare: 0.2 } },
  });
  h.arrive("a1", "A", 6900, { priorityClass: "bulk" }); // 10,000 − 1000 − 2000 = 7000 for bulk
  h.arrive("i1", "I", 2000, { priorityClass: "interactive" }); // need 2100 > 3000 − 1000 held
  h.arrive("i2", "I2", 1900, { priorityClass: "interactive" }); // need 2000: fits
  assert.equal(h.dispatchOf("a1")?.backendId, "b0");
  assert.equal(h.dispatchOf("i1"), undefined, "system's idle 1000 is held from interactive");
  assert.equal(h.dispatchOf("i2")?.backendId, "b0");
  h.arrive("s1", "S", 900, { priorityClass: "system" });
  assert.equal(h.dispatchOf("s1")?.backendId, "b0", "system's reservation stayed free for it");
});

test("a program takes the class of its latest request and its class books follow it", () => {
  const h = createPriorityHarness({
    capacity: 10_000,
    classes: { interactive: { reservedShare: 0.2 } },
  });
  h.turn("p1", "P", 900); // default
  let rooms = prioritySnap(h).backends[0].classes;
  assert.equal(rooms.default.usedTokens, 1000);
  h.arrive("p2", "P", 900, { priorityClass: "interactive" });
  rooms = prioritySnap(h).backends[0].classes;
  assert.equal(h.program("P")?.priorityClass, "interactive");
  assert.equal(rooms.default.usedTokens, 0, "left the default books");
  assert.equal(rooms.interactive.usedTokens, 1000, "now counts against interactive's reservation");
  assert.equal(rooms.interactive.heldTokens, 1000);
});
