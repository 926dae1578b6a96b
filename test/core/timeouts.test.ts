import assert from "node:assert/strict";
import { test } from "node:test";
import { MAX_PAUSE_MS } from "../../src/core/scheduler-config.ts";
import { createHarness } from "./harness.ts";

function blockedWaiter() {
  const h = createHarness({ backends: ["b0", "b1"], capacity: 1000 });
  h.arrive("f0", "F0", 800); // b0
  h.arrive("f1", "F1", 700); // b1
  h.arrive("w1", "W", 300); // need 400: no room anywhere → parked
  assert.equal(h.dispatchOf("w1"), undefined);
  return h;
}

// Idle lease longer than the max pause, so the ACTING programs are still there at the deadline.
const LONG_LEASE = { idleTimeoutMs: 2 * MAX_PAUSE_MS };

test("a request parked for maxPauseMs is overdue: room is made for it, never beyond capacity", () => {
  const h = createHarness({ backends: ["b0", "b1"], capacity: 1000, config: LONG_LEASE });
  h.turn("f0", "F0", 700); // b0, ACTING
  h.arrive("f1", "F1", 700); // b1, REASONING
  h.arrive("w1", "W", 300); // need 400: no room anywhere → parked
  assert.equal(h.scheduler.nextDeadline(), h.now + MAX_PAUSE_MS);
  h.advance(MAX_PAUSE_MS - 1);
  h.tick();
  assert.equal(h.dispatchOf("w1"), undefined, "one ms early: still parked");
  h.advance(1);
  h.tick();
  assert.equal(h.program("F0")?.state, "PAUSED", "the idle program gave its room");
  assert.deepEqual(h.dispatchOf("w1"), {
    requestId: "w1",
    backendId: "b0",
    pausedMs: MAX_PAUSE_MS,
  });
  assert.ok(h.backend("b0").usedTokens <= 1000, "the overdue program did not overfill b0");
});

test("when the last backend turns unhealthy, parked requests are answered 503 on that tick", () => {
  const h = blockedWaiter();
  for (let i = 0; i < 2; i++) h.tick({ b0: null, b1: null });
  assert.equal(h.rejectOf("w1"), undefined, "two failed polls of three: not unhealthy yet");
  h.tick({ b0: null, b1: null });
  assert.equal(h.rejectOf("w1")?.error.code, "no_healthy_backend");
  assert.equal(h.rejectOf("w1")?.error.headers["retry-after"], "1");
  assert.equal(h.dispatchOf("w1"), undefined);
  assert.equal(h.scheduler.snapshot().queueLength, 0);
});

test("maxWaitMs: a request parked longer is answered 503 paused_too_long on the tick", () => {
  const h = createHarness({ backends: ["b0"], capacity: 1000 });
  h.arrive("f1", "F", 800);
  h.arrive("w1", "W", 300, { maxWaitMs: 5000 });
  assert.equal(h.scheduler.nextDeadline(), h.now + 5000);
  h.advance(4999);
  h.tick();
  assert.equal(h.rejectOf("w1"), undefined);
  h.advance(1);
  h.tick();
  const rejected = h.rejectOf("w1");
  assert.equal(rejected?.error.code, "paused_too_long");
  assert.equal(rejected?.error.status, 503);
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "F" });
  assert.equal(h.dispatchOf("w1"), undefined, "a rejected request is never dispatched later");
});

test("idle lease: a program silent for idleTimeoutMs is released and its tokens freed", () => {
  const h = createHarness({
    backends: ["b0"],
    capacity: 10_000,
    config: { idleTimeoutMs: 60_000 },
  });
  h.turn("a1", "A", 500);
  h.advance(59_999);
  h.tick();
  assert.equal(h.program("A")?.state, "ACTIVE");
  h.advance(1);
  h.tick();
  assert.equal(h.program("A"), undefined);
  assert.equal(h.backend("b0").actingTokens, 0);
  const c = h.scheduler.snapshot().counters;
  assert.deepEqual([c.releases, c.idleReleases], [1, 1]);
});

test("idle lease never releases a program whose request is still in flight", () => {
  const h = createHarness({
    backends: ["b0"],
    capacity: 10_000,
    config: { idleTimeoutMs: 60_000 },
  });
  h.arrive("a1", "A", 500);
  h.advance(120_000);
  h.tick();
  assert.equal(h.program("A")?.status, "REASONING");
  h.finish("a1"); // activity: the lease restarts here
  h.advance(59_999);
  h.tick();
  assert.ok(h.program("A"));
});

test("activity renews the lease: only the silent program of two is released", () => {
  const h = createHarness({
    backends: ["b0"],
    capacity: 10_000,
    config: { idleTimeoutMs: 60_000 },
  });
  h.turn("a1", "A", 100);
  h.turn("b1", "B", 100);
  h.advance(30_000);
  h.turn("a2", "A", 100);
  h.advance(30_000);
  h.tick();
  assert.ok(h.program("A"), "A was active 30 s ago");
  assert.equal(h.program("B"), undefined);
});

test("release while parked rejects the parked request and dispatches it nowhere", () => {
  const h = createHarness({ backends: ["b0"], capacity: 1000 });
  h.arrive("f1", "F", 800);
  h.arrive("w1", "W", 300);
  h.arrive("w2", "W", 300);
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "W" });
  assert.deepEqual(
    h.rejects.map((r) => [r.requestId, r.error.status]),
    [
      ["w1", 404],
      ["w2", 404],
    ],
  );
  assert.equal(h.program("W"), undefined);
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "F" });
  h.tick();
  assert.equal(h.dispatchOf("w1"), undefined);
  h.finish("w1"); // the runtime still reports the end: ignored, nothing breaks
  assert.equal(h.scheduler.snapshot().queueLength, 0);
});

test("a final request releases its program after the response", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.turn("a1", "A", 100);
  h.arrive("a2", "A", 150, { final: true });
  assert.ok(h.program("A"), "not before the response");
  h.usage("a2", 200);
  h.finish("a2");
  assert.equal(h.program("A"), undefined);
  assert.equal(h.backend("b0").activePrograms, 0);
  assert.equal(h.scheduler.snapshot().counters.releases, 1);
});

test("shutdown rejects every parked request and every later arrival", () => {
  const h = createHarness({ backends: ["b0"], capacity: 1000 });
  h.arrive("f1", "F", 800);
  h.arrive("w1", "W", 300);
  h.scheduler.handle({ kind: "shutdown", now: h.now });
  assert.equal(h.rejectOf("w1")?.error.code, "shutting_down");
  h.arrive("late", "L", 10);
  assert.equal(h.rejectOf("late")?.error.code, "shutting_down");
  assert.equal(h.dispatchOf("late"), undefined);
  assert.equal(h.cancels.length, 0, "in-flight requests are left to drain");
});

// 1000.2 + 1_800_000 − 1_800_000 < 1000.2 in floating point: a check written as
// `now − maxPause >= parkedAt` missed the very deadline `nextDeadline()` reported.
test("an overdue request is due exactly at the deadline nextDeadline() reports, at fractional ms", () => {
  const h = createHarness({ backends: ["b0"], capacity: 1000, config: LONG_LEASE });
  h.turn("f1", "F", 700);
  h.advance(0.2);
  h.arrive("w1", "W", 300); // parked at 1000.2
  const at = h.scheduler.nextDeadline() as number;
  assert.equal(at, 1000.2 + MAX_PAUSE_MS);
  h.scheduler.handle({ kind: "tick", now: at, metrics: {} });
  assert.equal(h.dispatchOf("w1")?.backendId, "b0", "due at the reported deadline");
});

test("maxWaitMs and the idle lease are due exactly at their reported deadlines too", () => {
  const h = createHarness({ backends: ["b0"], capacity: 1000 });
  h.arrive("f1", "F", 800);
  h.advance(0.1);
  h.arrive("w1", "W", 300, { maxWaitMs: 500 }); // 1000.1 + 500 − 500 < 1000.1
  const wait = h.scheduler.nextDeadline() as number;
  h.scheduler.handle({ kind: "tick", now: wait, metrics: {} });
  assert.equal(h.rejectOf("w1")?.error.code, "paused_too_long");

  const idle = createHarness({ backends: ["b0"], capacity: 1000, config: { idleTimeoutMs: 500 } });
  idle.advance(0.1);
  idle.turn("a1", "A", 100); // last activity 1000.1
  const lease = idle.scheduler.nextDeadline() as number;
  assert.equal(lease, 1000.1 + 500);
  idle.scheduler.handle({ kind: "tick", now: lease, metrics: {} });
  assert.equal(idle.program("A"), undefined, "released at the reported deadline");
});
