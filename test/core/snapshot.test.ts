import assert from "node:assert/strict";
import { test } from "node:test";
import { createHarness } from "./harness.ts";

test("backend view: used = reasoning + w·acting − shared + buffer·active, remaining from capacity", () => {
  const h = createHarness({ backends: ["b0", "b1"], capacity: 10_000 });
  h.turn("a1", "A", 1000); // acting on b0
  h.arrive("b1r", "B", 2000); // reasoning on b1 (fewest tokens)
  h.arrive("c1", "C", 500); // reasoning on b0 (1000 < 2000)
  const b0 = h.backend("b0");
  assert.deepEqual(
    {
      reasoning: b0.reasoningTokens,
      acting: b0.actingTokens,
      active: b0.activePrograms,
      used: b0.usedTokens,
      remaining: b0.remainingTokens,
    },
    { reasoning: 500, acting: 1000, active: 2, used: 1700, remaining: 8300 },
  );
  assert.equal(h.backend("b1").usedTokens, 2100);
});

test("program view: placement, status, steps and paused time as the run loop sees them", () => {
  const h = createHarness({ backends: ["b0"], capacity: 1000 });
  h.arrive("f1", "F", 800);
  h.arrive("w1", "W", 300);
  h.advance(400);
  const waiting = h.program("W");
  assert.deepEqual(
    {
      state: waiting?.state,
      backend: waiting?.backend,
      parked: waiting?.parkedRequests,
      pausedMs: waiting?.pausedMs,
      steps: waiting?.steps,
    },
    { state: "PAUSED", backend: null, parked: 1, pausedMs: 0, steps: 1 },
    "pausedMs is as of the last event: the core has no clock of its own",
  );
  h.tick();
  assert.equal(h.program("W")?.pausedMs, 400);
  assert.equal(h.scheduler.snapshot().queueLength, 1);
  assert.equal(h.scheduler.snapshot().pausedPrograms, 1);
  h.finish("f1");
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "F" });
  const resumed = h.program("W");
  assert.equal(resumed?.state, "ACTIVE");
  assert.equal(resumed?.pausedSince, null);
  assert.equal(resumed?.pausedMs, 400, "time in the queue is kept after resume");
});

test("nextDeadline reports the earliest forced resume, max wait or idle expiry", () => {
  const h = createHarness({
    backends: ["b0"],
    capacity: 1000,
    config: { idleTimeoutMs: 60_000, maxPauseMs: 30_000 },
  });
  assert.equal(h.scheduler.nextDeadline(), null);
  const t0 = h.now;
  h.turn("a1", "A", 100);
  assert.equal(h.scheduler.nextDeadline(), t0 + 60_000, "idle lease of A");
  h.arrive("f1", "F", 800);
  h.advance(70_000);
  h.tick(); // A released; F is busy (in flight): no idle deadline to report for it
  assert.equal(h.program("A"), undefined);
  assert.equal(h.scheduler.nextDeadline(), null, "a deadline the tick would not act on");
  const t1 = h.now;
  h.arrive("w1", "W", 300);
  assert.equal(h.scheduler.nextDeadline(), t1 + 30_000, "forced resume of w1");
  h.arrive("w2", "W", 300, { maxWaitMs: 5000 });
  assert.equal(h.scheduler.nextDeadline(), t1 + 5000);
});

test("counters are copies: a snapshot does not change after later events", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  const before = h.scheduler.snapshot();
  h.turn("a1", "A", 100);
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "A" });
  assert.equal(before.counters.releases, 0);
  assert.equal(h.scheduler.snapshot().counters.releases, 1);
});
