import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_SCHEDULER_CONFIG } from "../../src/core/scheduler.ts";
import { IDLE_TIMEOUT_MS } from "../../src/core/scheduler-config.ts";
import { createHarness } from "./harness.ts";

// Trees are checked with the shipped defaults: learned headroom, ageing and lending on.
const shipped = (capacity = 100_000) =>
  createHarness({ backends: ["b0", "b1"], capacity, config: DEFAULT_SCHEDULER_CONFIG });
type H = ReturnType<typeof shipped>;

/** A whole step of `program` (a tool call ends it), naming `parent` when given. */
function step(h: H, id: string, program: string, tokens: number, parent?: string) {
  h.arrive(id, program, tokens, parent === undefined ? {} : { parentProgramId: parent });
  if (h.rejectOf(id) !== undefined) return;
  h.firstToken(id);
  h.usage(id, tokens);
  h.finish(id);
}

test("a sub-agent goes to its parent's backend, where another new program would not", () => {
  const h = shipped();
  step(h, "p1", "P", 20_000); // b0
  step(h, "q1", "Q", 2_000); // b1: fewer active tokens
  assert.equal(h.dispatchOf("p1")?.backendId, "b0");
  assert.equal(h.dispatchOf("q1")?.backendId, "b1");
  h.arrive("r1", "R", 500);
  assert.equal(h.dispatchOf("r1")?.backendId, "b1", "a root goes by load");
  h.arrive("c1", "C", 500, { parentProgramId: "P" });
  assert.equal(h.dispatchOf("c1")?.backendId, "b0", "beside its parent's prefix");
  assert.deepEqual(h.program("P")?.children, ["C"]);
  assert.equal(h.program("C")?.parentProgramId, "P");
  assert.deepEqual(h.scheduler.audit(), []);
});

test("a parent in its tool call lends its room to the sub-agent it waits on", () => {
  const h = shipped();
  step(h, "p1", "P", 20_000);
  const booked = h.backend("b0").usedTokens;
  assert.ok(booked >= 20_000);
  h.arrive("c1", "C", 500, { parentProgramId: "P" });
  assert.equal(h.program("P")?.lent, true);
  assert.ok(h.backend("b0").usedTokens < booked, "the parent's room went to the child");
  // The parent's next step books it again.
  h.finish("c1");
  step(h, "p2", "P", 21_000);
  assert.equal(h.program("P")?.lent, false);
  assert.deepEqual(h.scheduler.audit(), []);
});

test("a sub-agent that does not fit beside its running parent goes elsewhere", () => {
  const h = shipped(30_000);
  h.arrive("p1", "P", 20_000); // at work: nothing to lend
  h.arrive("c1", "C", 15_000, { parentProgramId: "P" });
  assert.equal(h.program("P")?.lent, false);
  assert.equal(h.dispatchOf("c1")?.backendId, "b1");
});

test("releasing a parent ends its children and theirs; held requests of them are refused", () => {
  const h = shipped();
  step(h, "p1", "P", 5000);
  step(h, "c1", "C", 500, "P");
  step(h, "g1", "G", 500, "C");
  h.arrive("c2", "C", 600); // in flight when the tree ends
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "P" });
  for (const id of ["P", "C", "G"]) assert.equal(h.program(id), undefined, `${id} ended`);
  assert.equal(h.cancels.length, 0, "a request under way runs to its end");
  h.finish("c2");
  assert.equal(h.backend("b0").usedTokens + h.backend("b1").usedTokens, 0);
  assert.equal(h.scheduler.snapshot().counters.releases, 3);
  assert.deepEqual(h.scheduler.audit(), []);
});

test("a parent ended by its budget ends its children", () => {
  const h = shipped();
  h.arrive("p1", "P", 5000, { budget: { steps: 1 } });
  h.finish("p1");
  step(h, "c1", "C", 500, "P");
  h.arrive("p2", "P", 5000);
  assert.equal(h.rejectOf("p2")?.error.code, "program_budget_exceeded");
  assert.equal(h.program("C"), undefined);
});

test("a child ending leaves its parent's tree; the parent stays", () => {
  const h = shipped();
  step(h, "p1", "P", 5000);
  step(h, "c1", "C", 500, "P");
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "C" });
  assert.deepEqual(h.program("P")?.children, []);
  assert.deepEqual(h.scheduler.audit(), []);
});

test("a parent waiting on its children is not idle; once they end it is", () => {
  const h = shipped();
  step(h, "p1", "P", 5000);
  h.arrive("c1", "C", 500, { parentProgramId: "P" }); // runs long
  h.advance(IDLE_TIMEOUT_MS + 1);
  h.tick();
  assert.ok(h.program("P"), "its child is still at work");
  h.finish("c1");
  h.advance(IDLE_TIMEOUT_MS + 1);
  h.tick();
  assert.equal(h.program("C"), undefined, "the child's lease ended");
  assert.ok(h.program("P"), "its parent's wait ended just now");
  h.advance(IDLE_TIMEOUT_MS + 1);
  h.tick();
  assert.equal(h.program("P"), undefined);
});

test("bad parents are refused 400 and change nothing", () => {
  const h = shipped();
  step(h, "p1", "P", 5000);
  step(h, "c1", "C", 500, "P");
  step(h, "r1", "R", 500);
  const before = h.scheduler.snapshot();
  const cases: [string, string, RegExp][] = [
    ["X", "X", /its own parent/],
    ["X", "nobody", /names no running program of this caller/],
    ["P", "C", /cycle/],
    ["C", "R", /already has another parent/],
    ["R", "P", /started without a parent/],
  ];
  let n = 0;
  for (const [program, parent, why] of cases) {
    const id = `bad${++n}`;
    h.arrive(id, program, 100, { parentProgramId: parent });
    const error = h.rejectOf(id)?.error;
    assert.equal(error?.status, 400, `${program} ← ${parent}`);
    assert.equal(error?.param, "parent_program_id");
    assert.match(error?.message ?? "", why);
    assert.equal(h.dispatchOf(id), undefined);
  }
  const after = h.scheduler.snapshot();
  assert.deepEqual(
    after.programs.map((p) => [p.id, p.steps, p.children]),
    before.programs.map((p) => [p.id, p.steps, p.children]),
  );
  // Naming the parent it has is no change.
  step(h, "c2", "C", 600, "P");
  assert.ok(h.dispatchOf("c2"));
});

test("a child's end renews its parent's idle lease", () => {
  const h = shipped();
  step(h, "p1", "P", 5000);
  h.arrive("c1", "C", 500, { parentProgramId: "P" });
  h.advance(IDLE_TIMEOUT_MS + 1); // the child ran long
  h.finish("c1");
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "C" });
  h.advance(100);
  h.tick();
  assert.ok(h.program("P"), "its wait just ended: not idle");
});

test("with priority classes on, a new sub-agent goes to its parent's backend too", () => {
  const h = createHarness({
    backends: ["b0", "b1"],
    capacity: 100_000,
    config: { ...DEFAULT_SCHEDULER_CONFIG, priority: {} },
  });
  h.arrive("p1", "P", 20_000);
  h.arrive("q1", "Q", 2_000);
  assert.equal(h.dispatchOf("p1")?.backendId, "b0");
  assert.equal(h.dispatchOf("q1")?.backendId, "b1");
  h.arrive("c1", "C", 500, { parentProgramId: "P" });
  assert.equal(h.dispatchOf("c1")?.backendId, "b0");
  assert.deepEqual(h.scheduler.audit(), []);
});
