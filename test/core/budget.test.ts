import assert from "node:assert/strict";
import { test } from "node:test";
import type { ProgramBudget } from "../../src/core/api.ts";
import { ENDED_ID_TTL_MS } from "../../src/core/ended-ids.ts";
import { DEFAULT_SCHEDULER_CONFIG } from "../../src/core/scheduler.ts";
import { createHarness } from "./harness.ts";

// Budgets are checked the same whatever the scheduler's tuning: run the shipped defaults.
const shipped = () =>
  createHarness({ backends: ["b0"], capacity: 100_000, config: DEFAULT_SCHEDULER_CONFIG });

/** One whole step of `program` with a context of `tokens`, asking for `budget` (or a parent). */
function step(
  h: ReturnType<typeof shipped>,
  id: string,
  program: string,
  tokens: number,
  budget?: ProgramBudget | string,
) {
  h.arrive(
    id,
    program,
    tokens,
    budget === undefined
      ? {}
      : typeof budget === "string"
        ? { parentProgramId: budget }
        : { budget },
  );
  if (h.rejectOf(id) !== undefined) return;
  h.firstToken(id);
  h.usage(id, tokens);
  h.finish(id);
}

test("steps: the step past the budget is refused 429 and the program is released", () => {
  const h = shipped();
  step(h, "r1", "P", 100, { steps: 2 });
  step(h, "r2", "P", 200);
  assert.deepEqual(h.program("P")?.budget?.steps, { limit: 2, used: 2 });
  assert.equal(h.rejects.length, 0, "two steps of two: both served");
  h.arrive("r3", "P", 300);
  const error = h.rejectOf("r3")?.error;
  assert.equal(error?.status, 429);
  assert.equal(error?.code, "program_budget_exceeded");
  assert.equal(error?.param, "budget.steps");
  assert.equal(error?.headers["x-should-retry"], "false", "retrying cannot help");
  assert.equal(h.dispatchOf("r3"), undefined);
  assert.equal(h.program("P"), undefined, "released");
  assert.deepEqual(h.scheduler.snapshot().budgetsExhausted, { steps: 1, tokens: 0, wall: 0 });
  assert.equal(h.backend("b0").usedTokens, 0, "its room is free");
  assert.deepEqual(h.scheduler.audit(), []);
});

test("an id ended by its budget stays refused for a while, then names a new program", () => {
  const h = shipped();
  step(h, "r1", "P", 100, { steps: 1 });
  h.arrive("r2", "P", 100);
  assert.equal(h.rejectOf("r2")?.error.code, "program_budget_exceeded");
  // A retry of the refusal, or a loop that carries on without the header, gets no fresh budget.
  h.advance(ENDED_ID_TTL_MS - 1);
  h.arrive("r3", "P", 100);
  assert.equal(h.rejectOf("r3")?.error.code, "program_budget_exceeded");
  assert.match(h.rejectOf("r3")?.error.message ?? "", /ended by its steps budget/);
  assert.equal(h.program("P"), undefined, "nothing was created");
  assert.deepEqual(
    h.scheduler.snapshot().budgetsExhausted,
    { steps: 1, tokens: 0, wall: 0 },
    "one program was ended, once",
  );
  h.advance(1);
  h.arrive("r4", "P", 100);
  assert.equal(h.rejectOf("r4"), undefined);
  assert.ok(h.dispatchOf("r4"), "an hour on, the id is a new program");
  assert.equal(h.program("P")?.budget, undefined, "without the old budget");
});

test("tokens: prompt + completion of every request count, by engine usage", () => {
  const h = shipped();
  step(h, "r1", "P", 600, { tokens: 1000 });
  assert.deepEqual(h.program("P")?.budget?.tokens, { limit: 1000, used: 600 });
  step(h, "r2", "P", 700);
  assert.deepEqual(h.program("P")?.budget?.tokens, { limit: 1000, used: 1300 });
  h.arrive("r3", "P", 800);
  assert.equal(h.rejectOf("r3")?.error.param, "budget.tokens");
  assert.deepEqual(h.scheduler.snapshot().budgetsExhausted, { steps: 0, tokens: 1, wall: 0 });
});

test("tokens: a request the engine never started costs nothing", () => {
  const h = shipped();
  h.arrive("r1", "P", 600, { budget: { tokens: 500 } });
  h.finish("r1", "backend_unreachable");
  assert.equal(h.program("P")?.budget?.tokens?.used, 0);
  h.arrive("r2", "P", 600);
  assert.equal(h.rejectOf("r2"), undefined);
});

test("wall: a step that starts at the wall budget is refused, one a millisecond before is not", () => {
  const h = shipped();
  step(h, "r1", "P", 100, { wallMs: 60_000 });
  h.advance(59_999);
  step(h, "r2", "P", 100);
  assert.equal(h.rejectOf("r2"), undefined);
  assert.deepEqual(h.program("P")?.budget?.wall, { limit: 60_000, used: 59_999 });
  h.advance(1);
  h.arrive("r3", "P", 100);
  assert.equal(h.rejectOf("r3")?.error.param, "budget.wall");
  assert.match(h.rejectOf("r3")?.error.message ?? "", /wall budget \(60 s\)/);
});

test("a budget is only ever lowered: a later request cannot raise it, leaving it out keeps it", () => {
  const h = shipped();
  step(h, "r1", "P", 100, { steps: 5, tokens: 10_000 });
  step(h, "r2", "P", 100, { steps: 2 });
  assert.deepEqual(h.program("P")?.budget, {
    steps: { limit: 2, used: 2 },
    tokens: { limit: 10_000, used: 200 },
  });
  h.arrive("r3", "P", 100, { budget: { steps: 50, tokens: 1_000_000, wallMs: 1 } });
  assert.equal(h.rejectOf("r3")?.error.param, "budget.steps", "steps=50 did not raise 2");
});

test("a retried request is the same step: never refused for the step it already counted", () => {
  const h = shipped();
  h.arrive("r1", "P", 100, { budget: { steps: 1 } });
  h.scheduler.handle({
    kind: "request_finished",
    now: h.now,
    requestId: "r1",
    outcome: "backend_unreachable",
    retrying: true,
  });
  h.arrive("r1b", "P", 100, { retry: true });
  assert.equal(h.rejectOf("r1b"), undefined);
  assert.ok(h.dispatchOf("r1b"));
});

test("a program's requests still in flight when it is ended run to their end", () => {
  const h = shipped();
  step(h, "r1", "P", 100, { steps: 2 });
  h.arrive("r2", "P", 100); // step 2, in flight
  h.arrive("r3", "P", 100); // a concurrent request: step 3, past the budget
  assert.equal(h.rejectOf("r3")?.error.code, "program_budget_exceeded");
  assert.equal(h.cancels.length, 0, "r2 was not cut");
  assert.equal(h.backend("b0").anonymousInFlight, 1, "r2 still counts on its backend");
  h.finish("r2");
  assert.equal(h.backend("b0").usedTokens, 0);
  assert.deepEqual(h.scheduler.audit(), []);
});

test("a program the router released goes on under the budget it had, as used", () => {
  const h = shipped();
  // Its answers end with no tool call: released when the grace ends.
  h.arrive("r1", "P", 100, { budget: { steps: 3 } });
  h.firstToken("r1");
  h.usage("r1", 100);
  h.scheduler.handle({
    kind: "request_finished",
    now: h.now,
    requestId: "r1",
    outcome: "ok",
    answerStopped: true,
  });
  h.advance(60_000);
  h.tick();
  assert.equal(h.program("P"), undefined, "released as likely done");
  step(h, "r2", "P", 100); // no header: the old budget still holds
  assert.deepEqual(h.program("P")?.budget?.steps, { limit: 3, used: 2 });
  step(h, "r3", "P", 100);
  h.arrive("r4", "P", 100);
  assert.equal(h.rejectOf("r4")?.error.param, "budget.steps");
});

test("a program ended by its idle lease comes back under its budget", () => {
  const h = shipped();
  step(h, "r1", "P", 100, { steps: 2, tokens: 10_000 });
  h.advance(DEFAULT_SCHEDULER_CONFIG.idleTimeoutMs + 1);
  h.tick();
  assert.equal(h.program("P"), undefined);
  step(h, "r2", "P", 100);
  assert.deepEqual(h.program("P")?.budget, {
    steps: { limit: 2, used: 2 },
    tokens: { limit: 10_000, used: 200 },
  });
  h.arrive("r3", "P", 100);
  assert.equal(h.rejectOf("r3")?.error.code, "program_budget_exceeded");
});

test("a carried budget already used up refuses the return at once", () => {
  const h = shipped();
  step(h, "r1", "P", 100, { steps: 1 });
  h.advance(DEFAULT_SCHEDULER_CONFIG.idleTimeoutMs + 1);
  h.tick();
  h.arrive("r2", "P", 100);
  assert.equal(h.rejectOf("r2")?.error.param, "budget.steps");
  assert.equal(h.program("P"), undefined);
  assert.deepEqual(h.scheduler.snapshot().budgetsExhausted, { steps: 1, tokens: 0, wall: 0 });
});

test("the retry of a request whose program ended meanwhile runs as a request of no program", () => {
  const h = shipped();
  h.arrive("a", "P", 100, { budget: { steps: 2 } });
  h.arrive("b", "P", 100);
  h.arrive("c", "P", 100); // third step: refused, P released; a and b run on
  assert.equal(h.rejectOf("c")?.error.code, "program_budget_exceeded");
  h.scheduler.handle({
    kind: "request_finished",
    now: h.now,
    requestId: "a",
    outcome: "backend_unreachable",
    retrying: true,
  });
  h.arrive("a2", "P", 100, { retry: true });
  assert.ok(h.dispatchOf("a2"), "the client's request is still answered");
  assert.equal(h.program("P"), undefined, "no fresh program, no fresh budget");
  assert.deepEqual(h.scheduler.audit(), []);
});

test("a request the router refuses before it runs costs no step", () => {
  const h = createHarness({ backends: ["b0"], capacity: 1000, config: DEFAULT_SCHEDULER_CONFIG });
  h.arrive("big", "B", 700); // fills the backend
  h.arrive("p1", "P", 600, { budget: { steps: 1 }, maxWaitMs: 1000 }); // parked
  assert.equal(h.dispatchOf("p1"), undefined);
  h.advance(1000);
  h.tick();
  assert.equal(h.rejectOf("p1")?.error.code, "paused_too_long");
  assert.deepEqual(h.program("P")?.budget?.steps, { limit: 1, used: 0 });
  h.finish("big");
  h.arrive("p2", "P", 600);
  assert.equal(h.rejectOf("p2"), undefined, "its one step is still there");
});

test("sub-agents of a tree ended by its budget stay refused, and the tree takes no new one", () => {
  const h = shipped();
  step(h, "p1", "P", 100, { steps: 1 });
  step(h, "c1", "C", 100, "P");
  h.arrive("p2", "P", 100);
  assert.equal(h.rejectOf("p2")?.error.code, "program_budget_exceeded");
  assert.equal(h.program("C"), undefined, "ended with its parent");
  h.arrive("c2", "C", 100); // carrying on without its parent's name
  assert.equal(h.rejectOf("c2")?.error.param, "budget.steps");
  h.arrive("d1", "D", 100, { parentProgramId: "P" }); // a new sub-agent of the ended tree
  assert.equal(h.rejectOf("d1")?.error.code, "program_budget_exceeded");
  assert.match(h.rejectOf("d1")?.error.message ?? "", /parent was ended/);
});
