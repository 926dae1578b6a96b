import assert from "node:assert/strict";
import { test } from "node:test";
import type { SchedulerConfig } from "../../src/core/api.ts";
import { DEFAULT_SCHEDULER_CONFIG } from "../../src/core/scheduler.ts";
import { FINAL_GRACE_MS } from "../../src/core/scheduler-config.ts";
import { createHarness } from "./harness.ts";

// The rule as shipped: learned headroom, ageing and lending on, the default grace.
const shipped = (config: Partial<SchedulerConfig> = {}) =>
  createHarness({
    backends: ["b0"],
    capacity: 100_000,
    config: { ...DEFAULT_SCHEDULER_CONFIG, ...config },
  });
type H = ReturnType<typeof shipped>;

/** A whole step of `program` whose answer stopped with no tool call (or called a tool). */
function step(h: H, id: string, program: string, tokens: number, stopped: boolean) {
  h.arrive(id, program, tokens);
  h.firstToken(id);
  h.usage(id, tokens);
  h.scheduler.handle({
    kind: "request_finished",
    now: h.now,
    requestId: id,
    outcome: "ok",
    ...(stopped ? { answerStopped: true } : {}),
  });
}

const counters = (h: H) => {
  const c = h.scheduler.snapshot().counters;
  return {
    marks: c.likelyDoneMarks,
    continued: c.likelyDoneContinued,
    released: c.likelyDoneReleases,
    returns: c.likelyDoneReturns,
  };
};

test("an answer with no tool call lends the program's room at once and releases it after the grace", () => {
  const h = shipped();
  step(h, "r1", "P", 5000, false);
  const booked = h.backend("b0").usedTokens;
  assert.ok(booked >= 5000, "a tool call keeps its room booked");
  step(h, "r2", "P", 6000, true);
  assert.equal(h.program("P")?.lent, true);
  assert.equal(h.backend("b0").usedTokens, 0, "its room is lent");
  assert.equal(h.scheduler.nextDeadline(), h.now + FINAL_GRACE_MS);
  h.advance(FINAL_GRACE_MS - 1);
  h.tick();
  assert.ok(h.program("P"), "one ms before the grace ends: still there");
  h.advance(1);
  h.tick();
  assert.equal(h.program("P"), undefined, "released");
  assert.deepEqual(counters(h), { marks: 1, continued: 0, released: 1, returns: 0 });
  assert.deepEqual(h.scheduler.audit(), []);
});

test("a request within the grace continues the program where it was, and it is never marked again", () => {
  const h = shipped();
  step(h, "r1", "P", 5000, true);
  h.advance(FINAL_GRACE_MS - 1);
  h.tick();
  step(h, "r2", "P", 6000, true);
  assert.equal(h.dispatchOf("r2")?.backendId, "b0", "on the backend it had");
  assert.equal(h.program("P")?.steps, 2);
  assert.equal(h.program("P")?.lent, false, "its room is booked again");
  // It went on after such an answer: its answers say nothing about its end any more.
  h.advance(10 * FINAL_GRACE_MS);
  h.tick();
  assert.ok(h.program("P"), "not released by a later stop answer");
  assert.deepEqual(counters(h), { marks: 1, continued: 1, released: 0, returns: 0 });
  assert.deepEqual(h.scheduler.audit(), []);
});

test("a request after the release counts as a return, and the new program is not marked", () => {
  const h = shipped();
  step(h, "r1", "P", 5000, true);
  h.advance(FINAL_GRACE_MS);
  h.tick();
  assert.equal(h.program("P"), undefined);
  step(h, "r2", "P", 6000, true);
  assert.ok(h.dispatchOf("r2"), "served as a new program");
  h.advance(FINAL_GRACE_MS);
  h.tick();
  assert.ok(h.program("P"), "it answers in text mid-run: no longer marked");
  assert.deepEqual(counters(h), { marks: 1, continued: 0, released: 1, returns: 1 });
});

test("answers that call a tool, failed answers and final requests are not marked", () => {
  const h = shipped();
  step(h, "r1", "P", 5000, false);
  h.arrive("r2", "P", 5000);
  h.scheduler.handle({
    kind: "request_finished",
    now: h.now,
    requestId: "r2",
    outcome: "upstream_error",
    answerStopped: true,
  });
  assert.deepEqual(counters(h), { marks: 0, continued: 0, released: 0, returns: 0 });
  assert.equal(h.program("P")?.lent, false);
});

test("the grace set to 0 turns the rule off", () => {
  const h = shipped({ finalGraceMs: 0 });
  step(h, "r1", "P", 5000, true);
  h.advance(60_000);
  h.tick();
  assert.ok(h.program("P"));
  assert.equal(counters(h).marks, 0);
});

test("the plain router releases a likely-done program too, with nothing to lend", () => {
  const h = shipped({ mode: "default" });
  step(h, "r1", "P", 5000, true);
  assert.equal(h.program("P")?.lent, false);
  h.advance(FINAL_GRACE_MS);
  h.tick();
  assert.equal(h.program("P"), undefined);
});

test("a program with running sub-agents is not released as likely done", () => {
  const h = shipped();
  step(h, "r1", "P", 5000, true); // marked
  h.arrive("c1", "C", 500, { parentProgramId: "P" }); // then it starts a sub-agent
  h.advance(FINAL_GRACE_MS);
  h.tick();
  assert.ok(h.program("P"), "it waits on its child");
  assert.ok(h.program("C"), "the child runs on");
  assert.equal(counters(h).released, 0);
  assert.deepEqual(h.scheduler.audit(), []);
});

test("a retry under way takes the mark back: the program is not released while it runs", () => {
  const h = shipped();
  h.arrive("a1", "P", 5000);
  h.arrive("b1", "P", 5000); // a concurrent request
  h.scheduler.handle({
    kind: "request_finished",
    now: h.now,
    requestId: "a1",
    outcome: "backend_unreachable",
    retrying: true,
  });
  h.firstToken("b1");
  h.scheduler.handle({
    kind: "request_finished",
    now: h.now,
    requestId: "b1",
    outcome: "ok",
    answerStopped: true,
  });
  assert.equal(counters(h).marks, 1);
  h.arrive("a2", "P", 5000, { retry: true }); // a1 again, on its way
  h.advance(FINAL_GRACE_MS);
  h.tick();
  assert.ok(h.program("P"), "its retry is running");
  assert.deepEqual(counters(h), { marks: 1, continued: 0, released: 0, returns: 0 });
  assert.deepEqual(h.scheduler.audit(), []);
});

test("with --lend-after 0 a likely-done program keeps its room until it is released", () => {
  const h = shipped({ lendAfterToolTimes: 0 });
  step(h, "r1", "P", 5000, true);
  assert.equal(counters(h).marks, 1);
  assert.equal(h.program("P")?.lent, false);
  h.advance(FINAL_GRACE_MS);
  h.tick();
  assert.equal(h.program("P"), undefined);
});
