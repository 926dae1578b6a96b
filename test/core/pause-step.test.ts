import assert from "node:assert/strict";
import { test } from "node:test";
import { createHarness } from "./harness.ts";

// Capacity 10,000 leaves room for setup; the test then lowers it through a tick (engine truth).

test("over capacity: ACTING programs are paused smallest first, and only until it fits", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.turn("a1", "A", 100);
  h.turn("b1", "B", 200);
  h.turn("c1", "C", 300);
  assert.equal(h.backend("b0").usedTokens, 900, "600 tokens + 3 × 100 buffer");
  h.tick({ b0: h.sample(700) }); // overflow 200 = exactly what pausing A frees (100 + 100)
  assert.equal(h.program("A")?.state, "PAUSED", "smallest acting program goes first");
  assert.equal(h.program("B")?.state, "ACTIVE");
  assert.equal(h.program("C")?.state, "ACTIVE");
  assert.equal(h.scheduler.snapshot().counters.pauses, 1);
  assert.equal(h.program("A")?.originBackend, "b0");
});

test("over capacity by more than the smallest frees: the next smallest ACTING follows", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.turn("a1", "A", 100);
  h.turn("b1", "B", 200);
  h.turn("c1", "C", 300);
  h.tick({ b0: h.sample(650) }); // overflow 250: A frees 200, B another 300
  assert.deepEqual(
    ["A", "B", "C"].map((id) => h.program(id)?.state),
    ["PAUSED", "PAUSED", "ACTIVE"],
  );
});

test("REASONING programs are marked smallest first and marking stops at projected fit", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.arrive("r1", "R1", 300);
  h.arrive("r2", "R2", 400);
  h.arrive("r3", "R3", 500);
  assert.equal(h.backend("b0").usedTokens, 1500);
  h.tick({ b0: h.sample(1300) }); // overflow 200; marking R1 will free 400
  h.tick({ b0: h.sample(1300) }); // the original would go on marking every program here
  const marked = ["R1", "R2", "R3"].map((id) => h.program(id)?.markedForPause);
  assert.deepEqual(marked, [true, false, false], "got marks on more than the smallest");
  assert.equal(h.scheduler.snapshot().counters.marks, 1);
  assert.equal(h.backend("b0").markedTokens, 300);
  assert.equal(h.program("R1")?.state, "ACTIVE", "marked programs keep running their turn");
});

test("a marked program is paused when its turn ends; an unmarked one stays active", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.arrive("r1", "R1", 300);
  h.arrive("r2", "R2", 400);
  h.tick({ b0: h.sample(700) }); // used 900 → overflow 200 → mark R1
  h.usage("r1", 320);
  h.finish("r1");
  const r1 = h.program("R1");
  assert.equal(r1?.state, "PAUSED");
  assert.equal(r1?.status, "ACTING");
  assert.equal(r1?.totalTokens, 320, "paused with the engine's final count");
  assert.equal(r1?.markedForPause, false);
  h.finish("r2");
  assert.equal(h.program("R2")?.state, "ACTIVE");
  assert.equal(h.backend("b0").markedTokens, 0);
});

test("a lone program over capacity is neither paused nor marked", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.arrive("x1", "X", 900);
  h.tick({ b0: h.sample(500) });
  assert.equal(h.program("X")?.markedForPause, false);
  h.finish("x1");
  h.tick({ b0: h.sample(500) });
  assert.equal(h.program("X")?.state, "ACTIVE");
  assert.equal(h.scheduler.snapshot().counters.pauses, 0);
});

test("acting weight below 1 lowers what idle programs cost and what pausing them frees", () => {
  const h = createHarness({
    backends: ["b0"],
    capacity: 10_000,
    config: { actingTokenWeight: 0.5 },
  });
  h.turn("a1", "A", 400);
  h.turn("b1", "B", 600);
  assert.equal(h.backend("b0").usedTokens, 0.5 * 1000 + 200);
  h.tick({ b0: h.sample(650) }); // overflow 50; A frees 0.5·400 + 100
  assert.equal(h.program("A")?.state, "PAUSED");
  assert.equal(h.program("B")?.state, "ACTIVE");
});
