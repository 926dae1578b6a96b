import assert from "node:assert/strict";
import { test } from "node:test";
import type { PriorityClass } from "../../src/core/api.ts";
import { createPriorityHarness, type PriorityHarness, prioritySnap } from "./priority-fixtures.ts";

// A class's used room counts each of its programs' learned headroom (src/core/headroom.ts), the
// rule the backend's used room follows (ledger.ts), not the flat buffer per program.
// Learned headroom = 4 × the step growth average; the buffer is 100 tokens.
const LEARNED = { growthHeadroomSteps: 4 };

function turn(
  h: PriorityHarness,
  id: string,
  program: string,
  tokens: number,
  cls: PriorityClass,
  final = false,
) {
  h.arrive(id, program, tokens, { priorityClass: cls, final });
  h.usage(id, tokens);
  h.finish(id);
}

function classRoom(h: PriorityHarness, cls: PriorityClass) {
  return prioritySnap(h).backends[0].classes[cls];
}

test("a class's used room follows its programs' learned headroom and is zero once they leave", () => {
  const h = createPriorityHarness({
    capacity: 100_000,
    config: LEARNED,
    classes: { interactive: { reservedShare: 0.5 } },
  });
  turn(h, "a1", "A", 1000, "interactive");
  assert.equal(classRoom(h, "interactive").usedTokens, 1000 + 100, "nothing learned: the buffer");
  turn(h, "a2", "A", 1500, "interactive"); // grew 500: A's headroom and the prior are 2000
  assert.equal(classRoom(h, "interactive").usedTokens, 1500 + 2000, "not 1500 + the 100 buffer");
  turn(h, "b1", "B", 1000, "interactive"); // B takes the prior's 2000
  let room = classRoom(h, "interactive");
  assert.equal(room.usedTokens, 1500 + 2000 + 1000 + 2000);
  assert.equal(room.heldTokens, 50_000 - 6500, "the hold shrinks by the learned headroom too");
  assert.equal(room.usedTokens, h.backend("b0").usedTokens, "one class: the backend's own sum");
  turn(h, "a3", "A", 1600, "interactive", true); // A's last turn: it leaves
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "B" });
  room = classRoom(h, "interactive");
  assert.equal(h.backend("b0").usedTokens, 0);
  assert.equal(room.usedTokens, 0, "no headroom left behind in the class book");
  assert.equal(room.heldTokens, 50_000);
});

test("a program moving class takes its learned headroom to the new class's books", () => {
  const h = createPriorityHarness({ capacity: 100_000, config: LEARNED });
  turn(h, "p1", "P", 1000, "default");
  turn(h, "p2", "P", 1500, "default");
  assert.equal(classRoom(h, "default").usedTokens, 3500);
  // No growth this step: the average (weight 0.25) drops to 375, the headroom to 1500.
  turn(h, "p3", "P", 1500, "interactive");
  assert.equal(h.backend("b0").usedTokens, 1500 + 1500);
  assert.equal(classRoom(h, "default").usedTokens, 0, "left the default books, headroom too");
  assert.equal(classRoom(h, "interactive").usedTokens, 1500 + 1500);
});

test("a lower class may take what a higher class's learned headroom uses of its reservation", () => {
  const h = createPriorityHarness({
    capacity: 10_000,
    config: LEARNED,
    classes: { interactive: { reservedShare: 0.5 } },
  });
  turn(h, "i1", "I", 1000, "interactive");
  turn(h, "i2", "I", 1500, "interactive"); // used 1500 + 2000 of 5000: 1500 held
  // Room 6500 − 1500 held = 5000: bulk's 3000 tokens + the prior's 2000 fit exactly. With the
  // flat buffer interactive would count 1600 used, hold 3400, and bulk would be queued.
  h.arrive("x1", "X", 3000, { priorityClass: "bulk" });
  assert.equal(h.dispatchOf("x1")?.backendId, "b0");
  assert.equal(h.backend("b0").remainingTokens, 1500, "exactly interactive's idle reservation");
});
