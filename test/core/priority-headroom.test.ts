import assert from "node:assert/strict";
import { test } from "node:test";
import type { PriorityClass } from "../../src/core/api.ts";
import { createPriorityHarness, type PriorityHarness, prioritySnap } from "./priority-fixtures.ts";

// With priorities on, needs and freed room count each program's learned headroom
// (src/core/headroom.ts), as tr does without priorities: arrival, resume pass, starvation
// promotion, preemption and pause victims. Learned headroom = 4 × the step growth average.
const LEARNED = { growthHeadroomSteps: 4 };

function turn(
  h: PriorityHarness,
  id: string,
  program: string,
  tokens: number,
  cls?: PriorityClass,
) {
  h.arrive(id, program, tokens, cls === undefined ? {} : { priorityClass: cls });
  h.usage(id, tokens);
  h.finish(id);
}

test("a new program is placed at arrival only where its tokens plus the learned prior fit", () => {
  const h = createPriorityHarness({ capacity: 10_000, config: LEARNED });
  turn(h, "a1", "A", 1000);
  turn(h, "a2", "A", 1500); // grew 500: A's headroom and the prior are 4 × 500
  assert.equal(h.backend("b0").usedTokens, 1500 + 2000);
  // Room 6500: B's 5000 tokens + 2000 headroom do not fit (with the flat buffer, 5100 would).
  h.arrive("b1", "B", 5000);
  assert.equal(h.dispatchOf("b1"), undefined, "B must wait: 7000 needed, 6500 free");
  assert.equal(h.program("B")?.state, "PAUSED");
});

/** A (2500 tokens, headroom 2500), B (3010, 100), C (10010, 100), all ACTING on b0, bulk. */
function threePrograms(classes: Parameters<typeof createPriorityHarness>[0]["classes"] = {}) {
  const h = createPriorityHarness({ capacity: 100_000, config: LEARNED, classes });
  for (const [id, sizes] of [
    ["A", [1000, 1500, 2500]],
    ["B", [3000, 3005, 3010]],
    ["C", [10_000, 10_005, 10_010]],
  ] as const) {
    sizes.forEach((t, i) => {
      turn(h, `${id}${i}`, id, t, "bulk");
    });
  }
  assert.equal(h.backend("b0").usedTokens, 2500 + 2500 + 3010 + 100 + 10_010 + 100);
  return h;
}

test("class-aware pause victims free their own headroom: one victim covers the overflow", () => {
  const h = threePrograms();
  // Overflow 4000: A frees 2500 + 2500. Counted with the flat buffer it would free only 2600
  // and B would be paused too.
  h.tick({ b0: h.sample(18_220 - 4000) });
  assert.deepEqual(
    ["A", "B", "C"].map((id) => h.program(id)?.state),
    ["PAUSED", "ACTIVE", "ACTIVE"],
  );
});

test("the class-order resume pass needs the program's tokens plus its headroom", () => {
  const h = threePrograms();
  h.tick({ b0: h.sample(14_220) });
  assert.equal(h.program("A")?.state, "PAUSED");
  h.arrive("A3", "A", 2500, { priorityClass: "bulk" });
  h.tick({ b0: h.sample(13_220 + 5000 - 1) });
  assert.equal(h.program("A")?.state, "PAUSED", "room 4999 < 2500 tokens + 2500 headroom");
  h.tick({ b0: h.sample(13_220 + 5000) });
  assert.equal(h.program("A")?.state, "ACTIVE");
  assert.ok(h.dispatchOf("A3"), "its parked request is dispatched on resume");
});

test("a starved head that fits nowhere frees its tokens plus its headroom, not just its tokens", () => {
  const h = threePrograms({ bulk: { starvationMs: 1000 } });
  h.tick({ b0: h.sample(14_220) });
  h.arrive("A3", "A", 2500, { priorityClass: "bulk" });
  h.advance(1000);
  h.tick({ b0: h.sample(13_220 + 5000 - 1) }); // 4999 free: A needs 2500 + 2500
  assert.equal(h.program("A")?.state, "ACTIVE", "promoted at its threshold");
  assert.equal(h.program("B")?.state, "PAUSED", "one token short: B gave way (the buffer: none)");
  assert.equal(prioritySnap(h).classes.bulk.promotions, 1);
});

test("a starved head that fits is promoted without pausing anyone", () => {
  const h = threePrograms({ bulk: { starvationMs: 1000 } });
  h.tick({ b0: h.sample(14_220) });
  h.arrive("A3", "A", 2500, { priorityClass: "bulk" });
  h.advance(1000);
  h.tick({ b0: h.sample(13_220 + 5000) });
  assert.equal(h.program("A")?.state, "ACTIVE");
  assert.deepEqual(
    ["B", "C"].map((id) => h.program(id)?.state),
    ["ACTIVE", "ACTIVE"],
  );
});

test("preemption counts the victim's headroom in the room it frees", () => {
  const h = createPriorityHarness({
    capacity: 10_000,
    config: LEARNED,
    classes: { interactive: { preempt: true } },
  });
  // V (bulk, ACTING): 2500 tokens + 2500 headroom; the prior growth is 750 (→ 3000 headroom).
  turn(h, "v1", "V", 1000, "bulk");
  turn(h, "v2", "V", 1500, "bulk");
  turn(h, "v3", "V", 2500, "bulk");
  assert.equal(h.backend("b0").usedTokens, 5000);
  // I needs 5000 + 3000 = 8000 > room 5000; V frees 5000 (with the flat buffer only 2600, and
  // no victim would qualify).
  h.arrive("i1", "I", 5000, { priorityClass: "interactive" });
  assert.equal(h.program("V")?.state, "PAUSED", "V gives way");
  assert.ok(h.dispatchOf("i1"), "I runs at once");
  assert.equal(prioritySnap(h).classes.bulk.preemptions, 1);
});

test("a queue timeout is due at parkedAt + timeout exactly, the deadline the core reports", () => {
  // 0.1 + 0.2: `now − parkedAt < timeout` at now = parkedAt + timeout by one rounding step.
  const timeout = 0.1 + 0.2;
  const h = createPriorityHarness({
    capacity: 1000,
    classes: { interactive: { queueTimeoutMs: timeout } },
  });
  h.arrive("p1", "P", 800);
  h.arrive("q1", "Q", 500, { priorityClass: "interactive" });
  assert.equal(h.program("Q")?.state, "PAUSED", "no room: Q is queued");
  const parkedAt = h.now;
  const deadline = h.scheduler.nextDeadline();
  assert.equal(deadline, parkedAt + timeout);
  h.advance((deadline as number) - h.now);
  assert.equal(h.now, deadline);
  h.tick();
  assert.equal(h.rejectOf("q1")?.error.status, 408, "due at the reported deadline");
  assert.equal(prioritySnap(h).classes.interactive.admissions.queue_timeout, 1);
});
