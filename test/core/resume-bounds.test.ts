import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_SCHEDULER_CONFIG } from "../../src/core/scheduler.ts";
import { createHarness } from "./harness.ts";

// The resume pass's bounds (src/core/resume.ts): every overdue request gets its seat, a queued
// program is placed with the headroom it books, and an idle backend takes a waiting program
// without a lower class pausing a higher one.

const AGEING = { ageingMs: 60_000, growthHeadroomSteps: 0 };

test("an overdue request that cannot be seated yet does not hold back the overdue ones behind it", () => {
  const h = createHarness({ backends: ["b0", "b1"], capacity: 2000, config: AGEING });
  h.arrive("a1", "A", 1500); // b0: need 1600
  h.arrive("b1", "B", 1500); // b1: need 1600
  h.arrive("g1", "G", 1200); // need 1300: queued
  h.arrive("k1", "K", 700); // need 800: queued
  h.advance(60_000);
  h.tick();
  // G goes first: b0 is held for it while A, marked, ends its turn. K is overdue too, and
  // room is made for it on the other backend at once, not only after G has its seat.
  assert.equal(h.program("A")?.markedForPause, true);
  assert.equal(h.program("B")?.markedForPause, true, "room is made for the second overdue request");
  h.usage("b1", 1500);
  h.finish("b1"); // B's turn ends: its room goes to the oldest overdue request
  assert.equal(h.dispatchOf("g1")?.backendId, "b1");
  assert.equal(h.dispatchOf("k1"), undefined, "b0 is held for K until A's turn ends");
  h.usage("a1", 1500);
  h.finish("a1");
  assert.equal(h.dispatchOf("k1")?.backendId, "b0");
});

test("a queued program is placed by the headroom it will book, learned while it waited", () => {
  const h = createHarness({
    backends: ["b0"],
    capacity: 10_000,
    config: { ...DEFAULT_SCHEDULER_CONFIG },
  });
  h.arrive("r1", "R", 100); // R stays REASONING: the backend is never idle
  h.turn("p1", "P", 1000);
  h.arrive("q1", "Q", 8900); // need 8900 + 100: queued, no growth seen yet
  assert.equal(h.dispatchOf("q1"), undefined);
  h.turn("p2", "P", 1500); // a step grows P by 500: the prior headroom is 4 × 500
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "P" });
  // Room 9800 would fit Q's headroom as it was when Q was queued, not the 2000 it books now.
  assert.equal(h.dispatchOf("q1"), undefined);
  const b = h.backend("b0");
  assert.ok(b.usedTokens <= 10_000, `books within capacity: ${b.usedTokens}`);
});

test("on an idle backend a lower class borrows a higher class's idle room rather than pausing it", () => {
  const h = createHarness({
    backends: ["b0"],
    capacity: 2000,
    config: { ...AGEING, priority: {} },
  });
  h.arrive("s1", "S", 1200, { priorityClass: "system" });
  h.usage("s1", 1200);
  h.finish("s1"); // S is in a tool call with its 1300 booked
  h.arrive("k1", "K", 1000, { priorityClass: "bulk" }); // need 1100: does not fit
  assert.equal(h.dispatchOf("k1"), undefined);
  h.tick({ b0: h.sample(2000, { kvUsage: 0.6, running: 0, waiting: 0 }) }); // the engine is idle
  assert.equal(h.dispatchOf("k1")?.backendId, "b0", "the idle GPU takes the waiting program");
  const s = h.program("S");
  assert.equal(s?.state, "ACTIVE", "bulk work never pauses a system program");
  assert.equal(s?.lent, true, "its idle room is lent and booked again when it sends");
  assert.ok(h.backend("b0").usedTokens <= 2000);
});

test("before any tool time is known a program keeps its room through the hold bound", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000, config: DEFAULT_SCHEDULER_CONFIG });
  h.turn("a1", "A", 1000);
  const hold = DEFAULT_SCHEDULER_CONFIG.lendMaxHoldMs;
  h.advance(hold - 1000);
  h.tick();
  assert.equal(h.program("A")?.lent, false, "an unknown tool time is no sign of a long one");
  h.advance(2000);
  h.tick();
  assert.equal(h.program("A")?.lent, true);
});

test("a backend that reports no KV capacity takes one program per sample while its engine queues nothing", () => {
  const h = createHarness({ backends: ["b0"], config: { ...DEFAULT_SCHEDULER_CONFIG } });
  const blind = (waiting: number) => ({ b0: h.sample(null, { waiting, running: 0 }) });
  h.tick(blind(0));
  assert.equal(
    h.logs.filter((l) => l.msg.startsWith("backend reports no KV capacity")).length,
    1,
    "warned once",
  );
  h.arrive("a1", "A", 5000);
  assert.equal(h.dispatchOf("a1")?.backendId, "b0", "placed by the engine's report");
  h.arrive("c1", "C", 100);
  assert.equal(h.dispatchOf("c1"), undefined, "one program per sample");
  h.advance(5000);
  h.tick(blind(0));
  assert.equal(h.dispatchOf("c1")?.backendId, "b0", "the next sample takes the next program");
  h.arrive("d1", "D", 100);
  h.advance(5000);
  h.tick(blind(3));
  assert.equal(h.dispatchOf("d1"), undefined, "an engine that queues takes nothing");
  assert.equal(h.backend("b0").remainingTokens, null, "no token room to show");
  assert.equal(h.scheduler.snapshot().counters.pauses, 0, "nothing is paused for room there");
  assert.equal(
    h.logs.filter((l) => l.msg.startsWith("backend reports no KV capacity")).length,
    1,
    "and not warned again",
  );
});
