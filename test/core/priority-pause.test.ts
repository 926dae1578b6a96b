import assert from "node:assert/strict";
import { test } from "node:test";
import { classAwareVictims } from "../../src/core/priority/class-victims.ts";
import { classIndex, type PriorityClass } from "../../src/core/priority/priority-classes.ts";
import type { ProgramRecord } from "../../src/core/records.ts";
import { createProgramRecord } from "../../src/core/scheduler-state.ts";
import { createPriorityHarness } from "./priority-fixtures.ts";

let seq = 0;
function program(id: string, cls: PriorityClass, tokens: number, status: "ACTING" | "REASONING") {
  const p = createProgramRecord(id, ++seq, null, 0);
  p.cls = classIndex(cls);
  p.tokens = tokens;
  p.status = status;
  p.headroom = 100; // what the core gives with a flat buffer of 100 (headroom.ts case 1)
  return p;
}

function victims(programs: ProgramRecord[], overflow: number) {
  const v = classAwareVictims({ programs, overflow, actingTokenWeight: 1, bufferPerProgram: 100 });
  return { pause: v.pause.map((p) => p.id), mark: v.mark.map((p) => p.id) };
}

test("victims come from the lowest class first, acting then reasoning within a class", () => {
  const ps = [
    program("i-act", "interactive", 100, "ACTING"),
    program("d-act", "default", 100, "ACTING"),
    program("b-act-big", "bulk", 900, "ACTING"),
    program("b-act", "bulk", 100, "ACTING"),
    program("b-rsn", "bulk", 100, "REASONING"),
  ];
  // bulk frees 200 + 1000 (acting, smallest first) + 200 (marked) = 1400; default then 200.
  assert.deepEqual(victims(ps, 1500), { pause: ["b-act", "b-act-big", "d-act"], mark: ["b-rsn"] });
});

test("interactive programs are victims only when nothing lower is left", () => {
  const ps = [
    program("i-act", "interactive", 100, "ACTING"),
    program("b-act", "bulk", 100, "ACTING"),
    program("s-rsn", "system", 100, "REASONING"),
  ];
  assert.deepEqual(victims(ps, 150), { pause: ["b-act"], mark: [] }, "bulk covers it");
  assert.deepEqual(victims(ps, 350), { pause: ["b-act", "i-act"], mark: [] }, "then interactive");
});

test("system programs are never paused or marked, even far over capacity", () => {
  const ps = [
    program("s1", "system", 100, "ACTING"),
    program("s2", "system", 100, "ACTING"),
    program("s3", "system", 100, "REASONING"),
  ];
  assert.deepEqual(victims(ps, 10_000), { pause: [], mark: [] });
});

test("a backend over capacity pauses bulk before default and keeps system running", () => {
  const h = createPriorityHarness({ capacity: 10_000 });
  const turn = (id: string, cls: PriorityClass, tokens: number) => {
    h.arrive(`${id}-1`, id, tokens, { priorityClass: cls });
    h.usage(`${id}-1`, tokens);
    h.finish(`${id}-1`);
  };
  turn("SYS", "system", 3900);
  turn("SYS2", "system", 100); // the smallest: tr alone would pause it first
  turn("DEF", "default", 900);
  turn("BULK", "bulk", 1900);
  h.tick({ b0: h.sample(6700) }); // used 7200: 500 over
  assert.equal(h.program("BULK")?.state, "PAUSED", "lowest class first, though not the smallest");
  assert.equal(h.program("DEF")?.state, "ACTIVE");
  h.tick({ b0: h.sample(4200) }); // used 5200: 1000 over
  assert.equal(h.program("DEF")?.state, "PAUSED");
  h.tick({ b0: h.sample(1000) }); // used 4200: far over, only system left
  assert.equal(h.program("SYS")?.state, "ACTIVE", "system is never paused");
  assert.equal(h.program("SYS2")?.state, "ACTIVE", "not even the smallest");
});
