import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_SCHEDULER_CONFIG } from "../../src/core/scheduler.ts";
import { NEW_PROGRAM_START_MS } from "../../src/core/scheduler-constants.ts";
import { createHarness } from "./harness.ts";

// A new program's first request (src/core/wait-bounds.ts case 2), on the shipped defaults:
// room is made for it once it has waited the start bound, instead of the ageing bound, so a
// large program that starts in a burst is not held behind smaller ones for minutes.

/** A and B (600 and 700) REASONING on b0 (2000), G (need > 700) new and held at `h.now`. */
function burst(config = DEFAULT_SCHEDULER_CONFIG) {
  const h = createHarness({ backends: ["b0"], capacity: 2000, config });
  h.arrive("a1", "A", 600);
  h.arrive("b1", "B", 700);
  h.arrive("g1", "G", 900);
  assert.equal(h.dispatchOf("g1"), undefined, "no room for G");
  return h;
}

test("a new program held for the start bound has room made for it, not later", () => {
  const h = burst();
  const due = h.scheduler.nextDeadline();
  assert.equal(due, h.now + NEW_PROGRAM_START_MS, "the runtime wakes when it is due");
  h.advance(NEW_PROGRAM_START_MS - 1);
  h.tick();
  assert.equal(h.program("A")?.markedForPause, false, "not due yet");
  const hold = h.scheduler.holdOf({ programId: "G" });
  assert.equal(hold?.roomBound, "new_program");
  h.advance(1);
  h.tick();
  assert.equal(h.program("A")?.markedForPause, true, "the smaller REASONING program is marked");
  h.arrive("s1", "S", 50);
  assert.equal(h.dispatchOf("s1"), undefined, "the backend is held for G");
  h.usage("a1", 600);
  h.finish("a1");
  assert.equal(h.dispatchOf("g1")?.backendId, "b0", "G takes A's room at the end of A's turn");
  assert.equal(h.program("A")?.state, "PAUSED");
  assert.deepEqual(h.scheduler.audit(), []);
});

test("with the start bound off, a new program waits by the ageing bound as any request", () => {
  const h = burst({ ...DEFAULT_SCHEDULER_CONFIG, newProgramStartMs: 0 });
  h.advance(NEW_PROGRAM_START_MS);
  h.tick();
  assert.equal(h.program("A")?.markedForPause, false);
  assert.equal(h.scheduler.holdOf({ programId: "G" })?.roomBound, "ageing");
  h.advance(DEFAULT_SCHEDULER_CONFIG.ageingMs - NEW_PROGRAM_START_MS);
  h.tick();
  assert.equal(h.program("A")?.markedForPause, true, "room is made at the ageing bound");
});

test("a released program that comes back starts anew: its first request has the start bound", () => {
  const h = createHarness({ backends: ["b0"], capacity: 2000, config: DEFAULT_SCHEDULER_CONFIG });
  h.turn("g0", "G", 300); // G has run
  h.arrive("a1", "A", 600);
  h.arrive("b1", "B", 700);
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "G" });
  h.arrive("g1", "G", 900); // a new program again: released, then back
  h.advance(NEW_PROGRAM_START_MS);
  h.tick();
  assert.equal(h.program("A")?.markedForPause, true, "a released program starts anew");
});
