import assert from "node:assert/strict";
import { test } from "node:test";
import { createHarness, sample } from "./harness.ts";

// Lending (src/core/lending.ts) with the shipped rule: hold idle room for 1× the expected
// tool time, at most 30 s; a program expected to take longer lends at once. Flat buffer 100.
const LENDING = { lendAfterToolTimes: 1, lendMaxHoldMs: 30_000 };

/** A on b0 with a learned tool time of `toolMs`, now ACTING in its third step's tool call. */
function actingWithToolTime(toolMs: number) {
  const h = createHarness({ backends: ["b0"], capacity: 2000, config: LENDING });
  h.turn("a1", "A", 800);
  h.advance(toolMs);
  h.turn("a2", "A", 900); // its tool call took toolMs: learned
  return h;
}

test("a program in a short tool call keeps its room until it has run its expected time", () => {
  const h = actingWithToolTime(4000);
  h.arrive("w1", "W", 1000); // need 1100 > room 2000 − 1000: waits
  assert.equal(h.dispatchOf("w1"), undefined);
  h.advance(3000);
  h.tick();
  assert.equal(h.program("A")?.lent, false, "3 s of an expected 4 s: still booked");
  assert.equal(h.dispatchOf("w1"), undefined);
  h.advance(1000);
  h.tick();
  assert.equal(h.program("A")?.lent, true, "4 s: its room is lent");
  assert.equal(h.dispatchOf("w1")?.backendId, "b0", "and the waiting program uses it");
  assert.equal(h.program("A")?.state, "ACTIVE", "lent, not paused: its prefix may still be cached");
});

test("a program expected to stay in its tool call past the hold bound lends at the next tick", () => {
  const h = actingWithToolTime(120_000);
  h.arrive("w1", "W", 900);
  h.advance(1);
  h.tick();
  assert.equal(h.program("A")?.lent, true);
  assert.equal(h.dispatchOf("w1")?.backendId, "b0");
});

test("a lent program that returns to a full backend is paused and its request waits", () => {
  const h = actingWithToolTime(120_000);
  h.arrive("w1", "W", 900);
  h.advance(1);
  h.tick(); // A lent, W runs in its room
  h.arrive("w2", "W", 1000); // W grows to 1000 (+ 100): A's 900 + 100 no longer fit beside it
  h.arrive("a3", "A", 1000);
  assert.equal(h.dispatchOf("a3"), undefined, "no room left for A's next step");
  assert.equal(h.program("A")?.state, "PAUSED");
  assert.equal(h.program("A")?.lent, false, "a paused program has nothing lent");
  h.finish("w1");
  h.finish("w2");
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "W" });
  assert.equal(h.dispatchOf("a3")?.backendId, "b0", "it resumes once the room is back");
});

test("a program sending again takes its room back when there is room", () => {
  const h = actingWithToolTime(120_000);
  h.advance(1);
  h.tick();
  assert.equal(h.program("A")?.lent, true);
  h.arrive("a3", "A", 1000);
  assert.equal(h.dispatchOf("a3")?.backendId, "b0");
  assert.equal(h.program("A")?.lent, false);
  assert.equal(h.backend("b0").usedTokens, 1000 + 100);
});

test("with priorities on, a returning interactive program takes its room back from bulk work", () => {
  const h = createHarness({
    backends: ["b0"],
    capacity: 2000,
    config: { ...LENDING, priority: {} },
  });
  const interactive = { priorityClass: "interactive" } as const;
  const bulk = { priorityClass: "bulk" } as const;
  h.arrive("a1", "A", 800, interactive);
  h.usage("a1", 800);
  h.finish("a1");
  h.advance(120_000);
  h.arrive("a2", "A", 900, interactive); // a human turn of 2 minutes: learned
  h.usage("a2", 900);
  h.finish("a2");
  h.advance(1);
  h.tick(); // A's room is lent at once
  assert.equal(h.program("A")?.lent, true);
  h.arrive("k1", "K", 1000, bulk);
  assert.equal(h.dispatchOf("k1")?.backendId, "b0", "bulk work runs in the lent room");
  // K's request is still before its first byte when A's next turn comes: no room for A.
  h.arrive("a3", "A", 1000, interactive);
  assert.equal(h.dispatchOf("a3")?.backendId, "b0", "the interactive turn goes out at once");
  assert.equal(h.cancels[0]?.requestId, "k1", "the bulk request gives way (503 preempted)");
  assert.equal(h.program("K")?.state, "PAUSED");
  assert.equal(h.program("A")?.state, "ACTIVE");
});
