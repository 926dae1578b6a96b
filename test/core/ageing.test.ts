import assert from "node:assert/strict";
import { test } from "node:test";
import { createHarness } from "./harness.ts";

// Resume ageing (src/core/resume.ts case 2): a program whose parked request waited `ageingMs`
// goes first in its group and, when it does not fit, gets room made for it. Flat buffer (100)
// for exact arithmetic.
const AGEING = { ageingMs: 60_000, growthHeadroomSteps: 0 };

function releaseAfterStep(h: ReturnType<typeof createHarness>, requestId: string, id: string) {
  h.usage(requestId, 800);
  h.finish(requestId);
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: id });
}

test("an aged program goes before a smaller one that arrived later", () => {
  const h = createHarness({ backends: ["b0"], capacity: 1000, config: AGEING });
  h.arrive("f1", "F", 800);
  h.arrive("g1", "G", 700); // need 800: queued
  h.advance(60_000);
  h.arrive("s1", "S", 250); // need 350: queued behind G
  releaseAfterStep(h, "f1", "F"); // room 1000: G (aged) first, then S no longer fits
  assert.equal(h.dispatchOf("g1")?.backendId, "b0");
  assert.equal(h.dispatchOf("s1"), undefined, "S waits: the room went to the aged program");
});

test("without ageing the smaller program takes the room and the big one keeps waiting", () => {
  const h = createHarness({
    backends: ["b0"],
    capacity: 1000,
    config: { ...AGEING, ageingMs: 0 },
  });
  h.arrive("f1", "F", 800);
  h.arrive("g1", "G", 700);
  h.advance(60_000);
  h.arrive("s1", "S", 250);
  releaseAfterStep(h, "f1", "F");
  assert.equal(h.dispatchOf("s1")?.backendId, "b0");
  assert.equal(h.dispatchOf("g1"), undefined);
});

/** A 300, B 400, C 500 ACTING on b0 (capacity 2000, room 500); G (need 1000) queued at t0. */
function crowded() {
  const h = createHarness({ backends: ["b0"], capacity: 2000, config: AGEING });
  h.turn("a1", "A", 300);
  h.turn("b1", "B", 400);
  h.turn("c1", "C", 500);
  h.arrive("g1", "G", 900);
  assert.equal(h.dispatchOf("g1"), undefined);
  return h;
}

test("an aged program that does not fit gets room: the smallest ACTING programs are paused", () => {
  const h = crowded();
  h.advance(59_999);
  h.tick();
  assert.equal(h.dispatchOf("g1"), undefined, "not aged yet: nobody is paused for it");
  assert.equal(h.scheduler.snapshot().counters.pauses, 0);
  h.advance(1);
  h.tick();
  // Missing 500: A frees 400, B another 500.
  assert.deepEqual(
    ["A", "B", "C"].map((id) => h.program(id)?.state),
    ["PAUSED", "PAUSED", "ACTIVE"],
  );
  assert.deepEqual(h.dispatchOf("g1"), { requestId: "g1", backendId: "b0", pausedMs: 60_000 });
  assert.equal(h.backend("b0").usedTokens, 500 + 900 + 200, "C and G fit exactly");
});

test("while marked programs finish their turn the backend is held for the aged program", () => {
  const h = createHarness({ backends: ["b0"], capacity: 2000, config: AGEING });
  h.arrive("a1", "A", 600);
  h.arrive("b1", "B", 700); // both REASONING: used 1500, room 500
  h.arrive("g1", "G", 900); // need 1000: queued
  h.advance(60_000);
  h.tick(); // missing 500: no ACTING program, so A is marked (frees 700 at its turn's end)
  assert.equal(h.program("A")?.markedForPause, true);
  assert.equal(h.program("B")?.markedForPause, false, "marking stops once it is enough");
  h.arrive("s1", "S", 100); // need 200 fits the room, but b0 is held for G
  assert.equal(h.dispatchOf("s1"), undefined);
  h.usage("a1", 600);
  h.finish("a1"); // A's turn ends: paused, room 1200 → G first, then S
  assert.equal(h.program("A")?.state, "PAUSED");
  assert.equal(h.dispatchOf("g1")?.backendId, "b0");
  assert.equal(h.dispatchOf("s1")?.backendId, "b0");
});

test("an aged program larger than the whole backend gets the backend emptied", () => {
  const h = createHarness({ backends: ["b0"], capacity: 2000, config: AGEING });
  h.turn("a1", "A", 300);
  h.turn("b1", "B", 400);
  h.arrive("g1", "G", 2500);
  h.tick();
  assert.equal(h.dispatchOf("g1"), undefined, "not overdue yet: it waits");
  h.advance(60_000);
  h.tick();
  assert.deepEqual(
    ["A", "B"].map((id) => h.program(id)?.state),
    ["PAUSED", "PAUSED"],
    "both programs in a tool call make way",
  );
  assert.equal(h.dispatchOf("g1")?.backendId, "b0", "it runs alone, the one program over");
});
