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

// A host KV tier: an engine that keeps evicted KV in host memory gives a context back at
// transfer cost, so where its tier holds every context (from 1.5 × their size until they
// outgrow it), idle room is lent at the turn's end.
const tier = (hostKvTokens?: number) =>
  hostKvTokens === undefined ? { hostKvTier: true } : { hostKvTier: true, hostKvTokens };

/** A in its tool call on b0 (2000 tokens), after a tick with `extra` in b0's sample. */
function actingOnTier(extra: Parameters<typeof sample>[1]) {
  const h = createHarness({ backends: ["b0"], capacity: 2000, config: LENDING });
  h.tick({ b0: sample(2000, extra) });
  h.turn("a1", "A", 800);
  h.arrive("w1", "W", 1100); // need 1200 > 2000 − 900 while A's room is booked
  return h;
}

test("where the host tier holds every context, a program lends its room when its turn ends", () => {
  const h = actingOnTier(tier(100_000));
  assert.equal(h.program("A")?.lent, true, "lent at once, not after its tool time");
  assert.equal(h.program("A")?.state, "ACTIVE");
  assert.equal(h.dispatchOf("w1")?.backendId, "b0", "the waiting program runs in its room");
});

test("a host tier too small for the contexts, or of unknown size, lends nothing early", () => {
  for (const extra of [tier(700), tier(), {}]) {
    const h = actingOnTier(extra);
    assert.equal(h.program("A")?.lent, false, JSON.stringify(extra));
    assert.equal(h.dispatchOf("w1"), undefined);
  }
});

test("where the host tier holds every context, a program marked for pause is lent instead", () => {
  for (const [hostKvTokens, want] of [
    [100_000, "ACTIVE"],
    [1000, "PAUSED"],
  ] as const) {
    const h = createHarness({ backends: ["b0"], capacity: 2000, config: LENDING });
    h.arrive("a1", "A", 800);
    h.arrive("b1", "B", 900);
    h.tick({ b0: sample(1500, tier(hostKvTokens)) }); // 1700 + 200 > 1500: A (smaller) marked
    assert.equal(h.program("A")?.markedForPause, true);
    h.finish("a1");
    assert.equal(h.program("A")?.state, want, `host tier of ${hostKvTokens} tokens`);
    assert.equal(h.program("A")?.markedForPause, false);
    assert.equal(h.program("A")?.lent, want === "ACTIVE");
    assert.deepEqual(h.scheduler.audit(), []);
  }
});

test("the contexts a host tier must hold include those of the programs paused from it", () => {
  for (const [hostKvTokens, lent] of [
    [2000, false], // 1.5 × A's 800 fit, 1.5 × A's and P's 1400 do not
    [2800, true],
  ] as const) {
    const h = createHarness({ backends: ["b0"], capacity: 2000, config: LENDING });
    h.turn("p1", "P", 600);
    h.turn("a1", "A", 800);
    h.tick({ b0: sample(1500) }); // 1400 + 200 > 1500: P (smaller) paused
    assert.equal(h.program("P")?.state, "PAUSED");
    // A GPU of 200 tokens (a tier from 5 × that counts); A, alone there, is never paused.
    h.tick({ b0: sample(200, tier(hostKvTokens)) });
    assert.equal(h.program("A")?.lent, lent, `host tier of ${hostKvTokens} tokens`);
  }
});

test("a host tier holds the contexts from 1.5 times their size until they outgrow it", () => {
  const lentAfter = (steps: number[]) => {
    const h = createHarness({ backends: ["b0"], capacity: 2000, config: LENDING });
    h.tick({ b0: sample(100, tier(1000)) }); // a tier of 10 × the GPU's KV
    return steps.map((tokens, i) => {
      h.turn(`a${i}`, "A", tokens);
      return h.program("A")?.lent;
    });
  };
  assert.deepEqual(lentAfter([600, 900, 1100]), [true, true, false], "on at 600, off past 1000");
  assert.deepEqual(lentAfter([900]), [false], "900 × 1.5 > 1000: not on to begin with");
});

test("a host tier smaller than 5 times the GPU's KV never counts as holding the contexts", () => {
  for (const [hostKvTokens, lent] of [
    [9_999, false],
    [10_000, true],
  ] as const) {
    const h = actingOnTier(tier(hostKvTokens)); // GPU: 2000 tokens
    assert.equal(h.program("A")?.lent, lent, `host tier of ${hostKvTokens} tokens`);
  }
});
