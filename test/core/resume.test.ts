import assert from "node:assert/strict";
import { test } from "node:test";
import { createHarness, type Harness } from "./harness.ts";

/** Pause `ids` (ACTING, placed before) by squeezing b0 while `keeper` holds it. */
function pauseAll(h: Harness, ids: string[], capacity: number) {
  h.tick({ b0: h.sample(capacity) });
  for (const id of ids) assert.equal(h.program(id)?.state, "PAUSED", `${id} should be paused`);
}

test("resume order: a waiting program, then a new one, before a paused one with nothing waiting", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.turn("p1", "P1", 100);
  h.turn("p2", "P2", 100);
  h.arrive("f1", "F", 700); // REASONING: never paused while acting programs remain
  pauseAll(h, ["P1", "P2"], 900); // used 1200 → both acting programs paused
  h.arrive("p2b", "P2", 100); // P2 now has a request waiting
  h.arrive("n1", "N", 100); // new program, queued behind P2 (room 100 < need 200)
  assert.equal(h.dispatchOf("p2b"), undefined);
  assert.equal(h.dispatchOf("n1"), undefined);
  h.tick({ b0: h.sample(1200) }); // room 400: two of the three fit
  assert.equal(h.dispatchOf("p2b")?.backendId, "b0", "waiting program resumed");
  assert.equal(h.dispatchOf("n1")?.backendId, "b0", "new program resumed");
  assert.equal(h.program("P1")?.state, "PAUSED", "nothing waits on P1: it goes last");
});

test("within a group the smallest goes first, even when a larger one alone would fit", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.turn("s1", "S", 100);
  h.turn("l1", "L", 300);
  h.arrive("f1", "F", 700);
  pauseAll(h, ["S", "L"], 900);
  h.arrive("s2", "S", 100);
  h.arrive("l2", "L", 300);
  h.tick({ b0: h.sample(1250) }); // room 450: S (200) first leaves 250 < 400 for L
  assert.ok(h.dispatchOf("s2"), "smaller waiting program resumed");
  assert.equal(h.dispatchOf("l2"), undefined, "larger one waits");
  assert.equal(h.dispatchOf("s2")?.pausedMs, 0, "same instant: parked for 0 ms");
});

function placementScenario(placement: "best-fit" | "worst-fit") {
  // Capacities unknown at first: new programs queue until the first tick teaches them.
  const h = createHarness({ backends: ["b0", "b1", "b2"], config: { placement } });
  h.arrive("small", "SMALL", 150); // need 250
  h.arrive("large", "LARGE", 350); // need 450
  assert.equal(h.dispatches.length, 0, "no tr placement while capacity is unknown");
  h.tick({ b0: h.sample(500), b1: h.sample(300), b2: h.sample(1000) });
  return [h.dispatchOf("large")?.backendId, h.dispatchOf("small")?.backendId];
}

test("best-fit places largest first on the backend with the least room that fits", () => {
  assert.deepEqual(placementScenario("best-fit"), ["b0", "b1"]);
});

test("worst-fit (the original) places largest first on the backend with the most room", () => {
  assert.deepEqual(placementScenario("worst-fit"), ["b2", "b2"]);
});

function originScenario(
  placement: "best-fit" | "worst-fit",
  b0Capacity: number,
  b0HostKvTier?: boolean,
) {
  const h = createHarness({ backends: ["b0", "b1"], capacity: 10_000, config: { placement } });
  const b0 = (capacity: number) =>
    h.sample(capacity, b0HostKvTier === undefined ? {} : { hostKvTier: b0HostKvTier });
  h.turn("p1", "P", 100); // fewest active tokens: b0
  h.arrive("q1", "Q", 400); // b1 (b0 holds P)
  h.arrive("q2", "Q2", 300); // b0
  h.tick({ b0: b0(500), b1: h.sample(10_000) }); // b0: 400 + 200 > 500 → pause P
  assert.equal(h.program("P")?.originBackend, "b0");
  h.tick({ b0: b0(b0Capacity), b1: h.sample(400 + 100 + 700) }); // b1 room 700
  h.arrive("p2", "P", 100);
  return { h, b0 };
}

test("a paused program returns to its origin backend when it fits there", () => {
  const { h } = originScenario("worst-fit", 800); // b0 room 400 < b1 room 700: policy says b1
  assert.equal(h.dispatchOf("p2")?.backendId, "b0");
  assert.equal(h.scheduler.snapshot().counters.migrations, 0);
});

test("a paused program moves elsewhere when its origin has no room, counting a migration", () => {
  for (const tier of [undefined, false]) {
    const { h } = originScenario("best-fit", 500, tier); // b0 room 100 < need 200
    assert.equal(h.dispatchOf("p2")?.backendId, "b1", `host KV tier ${tier}`);
    assert.equal(h.scheduler.snapshot().counters.migrations, 1);
    assert.equal(h.program("P")?.backend, "b1");
  }
});

test("a paused program waits for its origin when that engine keeps its KV in host memory", () => {
  const { h, b0 } = originScenario("best-fit", 500, true); // b0 room 100 < need 200
  assert.equal(h.dispatchOf("p2"), undefined, "b1 has room, but P's context is on b0");
  assert.equal(h.program("P")?.state, "PAUSED");
  h.tick({ b0: b0(800), b1: h.sample(1200) }); // b0 room 400
  assert.equal(h.dispatchOf("p2")?.backendId, "b0");
  assert.equal(h.scheduler.snapshot().counters.migrations, 0);
});

function decayScenario(useActingTokenDecay: boolean) {
  const h = createHarness({ backends: ["b0"], capacity: 1000, config: { useActingTokenDecay } });
  h.turn("a1", "A", 600); // acting: used 700, room 300
  h.arrive("w1", "W", 250); // need 350 → queued
  assert.equal(h.dispatchOf("w1"), undefined);
  h.advance(1000); // one second acting: 2^(−1) of A's tokens
  h.tick();
  return h.dispatchOf("w1");
}

test("acting-token decay: after 1 s an acting program counts half for resume, letting W in", () => {
  assert.equal(decayScenario(true)?.backendId, "b0");
  assert.equal(decayScenario(true)?.pausedMs, 1000);
});

test("without decay the same acting program keeps W waiting", () => {
  assert.equal(decayScenario(false), undefined);
});

test("a new program is placed at once even when idle paused programs sit in the queue", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.turn("p1", "P", 500);
  h.arrive("f1", "F", 700);
  pauseAll(h, ["P"], 1300); // P (need 600) no longer fits the 500 left: it stays queued
  assert.equal(h.scheduler.snapshot().pausedPrograms, 1);
  h.arrive("n1", "N", 100);
  assert.deepEqual(h.dispatchOf("n1"), { requestId: "n1", backendId: "b0", pausedMs: 0 });
  assert.equal(h.program("N")?.state, "ACTIVE");
  assert.equal(h.scheduler.snapshot().counters.resumes, 0, "placed directly, not via the queue");
  assert.equal(h.program("P")?.state, "PAUSED");
});

test("freed capacity resumes a waiting program at once, without a tick", () => {
  const h = createHarness({ backends: ["b0"], capacity: 1000 });
  h.arrive("f1", "F", 700); // used 800
  h.arrive("w1", "W", 300); // need 400 > room 200 → queued
  assert.equal(h.dispatchOf("w1"), undefined);
  h.advance(250);
  h.finish("f1");
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "F" });
  assert.deepEqual(h.dispatchOf("w1"), { requestId: "w1", backendId: "b0", pausedMs: 250 });
  assert.deepEqual(h.scheduler.drainPauseObservations(), [250]);
  assert.deepEqual(h.scheduler.drainPauseObservations(), [], "drained");
});

test("a released program's request still running keeps its room booked until it ends", () => {
  const h = createHarness({ backends: ["b0"], capacity: 1000 });
  h.arrive("f1", "F", 700);
  h.arrive("w1", "W", 300);
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "F" });
  assert.equal(h.dispatchOf("w1"), undefined, "f1's 700 tokens are still on the GPU");
  h.finish("f1");
  assert.equal(h.dispatchOf("w1")?.backendId, "b0");
});

test("an oversized program is seated at once on an empty backend and never paused there", () => {
  const h = createHarness({ backends: ["b0"], capacity: 1000 });
  h.arrive("x1", "X", 2000);
  assert.equal(h.dispatchOf("x1")?.backendId, "b0", "not left to the force-resume timeout");
  h.tick({ b0: h.sample(1000, { waiting: 1 }) });
  assert.equal(h.program("X")?.markedForPause, false);
  h.finish("x1");
  h.tick();
  assert.equal(h.program("X")?.state, "ACTIVE");
});

test("an oversized program waits while others run, then takes the backend once it empties", () => {
  const h = createHarness({ backends: ["b0"], capacity: 1000 });
  h.arrive("s1", "S", 200);
  h.arrive("x1", "X", 2000);
  h.tick();
  assert.equal(h.dispatchOf("x1"), undefined);
  h.finish("s1");
  assert.equal(h.dispatchOf("x1"), undefined, "S is still active (acting) on b0");
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "S" });
  assert.equal(h.dispatchOf("x1")?.backendId, "b0");
});

test("a new program queued behind a waiting program that cannot fit is still placed at once", () => {
  const h = createHarness({ backends: ["b0"], capacity: 1000 });
  h.arrive("s1", "S", 200);
  h.arrive("x1", "X", 2000); // waits: b0 is not empty
  h.arrive("n1", "N", 100);
  assert.deepEqual(h.dispatchOf("n1"), { requestId: "n1", backendId: "b0", pausedMs: 0 });
  assert.equal(h.dispatchOf("x1"), undefined);
});
