import assert from "node:assert/strict";
import { test } from "node:test";
import { GROWTH_HEADROOM_CAP_TOKENS } from "../../src/core/scheduler-config.ts";
import { createHarness } from "./harness.ts";

// Learned headroom (src/core/headroom.ts): each active program keeps room for
// `growthHeadroomSteps` × the moving average of its context growth per step, at least the
// flat buffer (100). `turn` ends a step with usage = the given total.
const LEARNED = { growthHeadroomSteps: 4 };

test("after two steps a program's headroom is 4 × its step growth, and it counts as used", () => {
  const h = createHarness({ backends: ["b0"], capacity: 100_000, config: LEARNED });
  h.turn("a1", "A", 1000);
  assert.equal(h.backend("b0").usedTokens, 1000 + 100, "one step: no growth seen, the buffer");
  h.turn("a2", "A", 1500); // grew 500
  assert.equal(h.backend("b0").usedTokens, 1500 + 4 * 500);
  h.turn("a3", "A", 2500); // grew 1000: average 500 + 0.25 × (1000 − 500) = 625
  assert.equal(h.backend("b0").usedTokens, 2500 + 4 * 625);
});

test("headroom is never below the flat buffer nor above the cap", () => {
  const h = createHarness({ backends: ["b0", "b1"], capacity: 100_000, config: LEARNED });
  h.turn("s1", "S", 3000);
  h.turn("s2", "S", 3010); // grew 10: 4 × 10 < 100
  const slow = h.program("S")?.backend as string;
  assert.equal(h.backend(slow).usedTokens, 3010 + 100);
  h.turn("f1", "F", 1000);
  h.turn("f2", "F", 9000); // grew 8000: 4 × 8000 is capped
  const fast = h.program("F")?.backend as string;
  const want = (fast === slow ? 3010 + 100 : 0) + 9000 + GROWTH_HEADROOM_CAP_TOKENS;
  assert.equal(h.backend(fast).usedTokens, want);
});

test("a new program starts from the all-programs median growth (the buffer before any)", () => {
  const h = createHarness({ backends: ["b0"], capacity: 100_000, config: LEARNED });
  h.arrive("z1", "Z", 1000);
  assert.equal(h.backend("b0").usedTokens, 1000 + 100, "nothing learned yet: the buffer");
  h.finish("z1");
  h.turn("a1", "A", 1000);
  h.turn("a2", "A", 1500); // all programs: mean of [500]
  h.turn("a3", "A", 2500); // median of [500, 1000] = 750
  const before = h.backend("b0").usedTokens;
  h.arrive("b1", "B", 1000);
  assert.equal(h.backend("b0").usedTokens - before, 1000 + 4 * 750);
});

test("growthHeadroomSteps 0 keeps ThunderAgent's flat buffer whatever the growth", () => {
  const h = createHarness({
    backends: ["b0"],
    capacity: 100_000,
    config: { growthHeadroomSteps: 0 },
  });
  h.turn("a1", "A", 1000);
  h.turn("a2", "A", 5000);
  assert.equal(h.backend("b0").usedTokens, 5000 + 100);
});

/** A (2500 tokens, headroom 2500), B (3010, 100), C (10010, 100), all ACTING on b0. */
function threePrograms() {
  const h = createHarness({ backends: ["b0"], capacity: 100_000, config: LEARNED });
  for (const [id, sizes] of [
    ["A", [1000, 1500, 2500]],
    ["B", [3000, 3005, 3010]],
    ["C", [10_000, 10_005, 10_010]],
  ] as const) {
    sizes.forEach((t, i) => {
      h.turn(`${id}${i}`, id, t);
    });
  }
  assert.equal(h.backend("b0").usedTokens, 2500 + 2500 + 3010 + 100 + 10_010 + 100);
  return h;
}

test("pausing a program frees its tokens and its own headroom: no extra victim", () => {
  const h = threePrograms();
  // Overflow 4000: A frees 2500 + 2500; counted with the flat buffer it would free 2600 and
  // B would be paused too.
  h.tick({ b0: h.sample(18_220 - 4000) });
  assert.deepEqual(
    ["A", "B", "C"].map((id) => h.program(id)?.state),
    ["PAUSED", "ACTIVE", "ACTIVE"],
  );
});

test("a paused program resumes only when the room covers its tokens and its headroom", () => {
  const h = threePrograms();
  h.tick({ b0: h.sample(14_220) });
  assert.equal(h.program("A")?.state, "PAUSED");
  h.tick({ b0: h.sample(13_220 + 5000 - 1) });
  assert.equal(h.program("A")?.state, "PAUSED", "room 4999 < 2500 tokens + 2500 headroom");
  h.tick({ b0: h.sample(13_220 + 5000) });
  assert.equal(h.program("A")?.state, "ACTIVE");
});

test("one outlier step cannot poison the prior: new programs keep the typical headroom", () => {
  const h = createHarness({ backends: ["b0", "b1"], capacity: 100_000, config: LEARNED });
  // Twenty programs grow by 300 tokens a step; one takes in a 200 KB tool output (50K tokens).
  for (let i = 0; i < 20; i++) {
    h.turn(`p${i}-1`, `P${i}`, 1000);
    h.turn(`p${i}-2`, `P${i}`, 1300);
  }
  h.turn("x1", "X", 1000);
  h.turn("x2", "X", 51_000);
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "X" });
  h.arrive("n1", "N", 500);
  assert.equal(h.program("N")?.headroomTokens, 4 * 300, "the median of the growths, not the mean");
  // So forty small new programs still fit beside the others, as before the outlier.
  let admitted = 0;
  for (let i = 0; i < 40; i++) {
    h.arrive(`m${i}`, `M${i}`, 500);
    if (h.dispatchOf(`m${i}`) !== undefined) admitted++;
  }
  assert.equal(admitted, 40);
});
