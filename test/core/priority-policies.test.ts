import assert from "node:assert/strict";
import { test } from "node:test";
import type { PriorityPolicy, QueuePolicy } from "../../src/core/api.ts";
import { createClassOrder, priorityScore } from "../../src/core/priority/class-order.ts";
import { classIndex, type PriorityClass } from "../../src/core/priority/priority-classes.ts";
import type { RequestRecord } from "../../src/core/records.ts";
import { createProgramRecord } from "../../src/core/scheduler-state.ts";
import { createPriorityHarness } from "./priority-fixtures.ts";

const NOW = 100_000;
let seq = 0;

/** A queued program: `waitingSince` null = nothing waiting (paused between turns). */
function queued(
  id: string,
  tokens: number,
  waitingSince: number | null,
  cls: PriorityClass = "default",
) {
  const p = createProgramRecord(id, ++seq, null, 0);
  p.tokens = tokens;
  p.cls = classIndex(cls);
  p.queueSeq = seq;
  p.placedOnce = true;
  p.pausedSince = 0;
  if (waitingSince !== null) p.parked.push({ parkedAt: waitingSince } as RequestRecord);
  return p;
}

function order(
  queuePolicy: QueuePolicy,
  priorityPolicy: PriorityPolicy,
  programs: ReturnType<typeof queued>[],
) {
  const cmp = createClassOrder({
    queuePolicy,
    priorityPolicy,
    ageWeightPerMs: 1e-3,
    now: () => NOW,
  });
  return [...programs].sort(cmp).map((p) => p.id);
}

/** Arrival order c, a, b (a and b arrived together); sizes a < c < b; idle z waits for nothing. */
const mixed = () => [
  queued("b", 900, 2000),
  queued("z", 10, null),
  queued("a", 100, 2000),
  queued("c", 500, 1000),
];

test("fcfs: oldest waiting request first, ties by id, programs with nothing waiting last", () => {
  assert.deepEqual(order("fcfs", "constant", mixed()), ["c", "a", "b", "z"]);
});

test("priority-fcfs with constant scores is exactly fcfs (a degenerate combination)", () => {
  assert.deepEqual(order("priority-fcfs", "constant", mixed()), order("fcfs", "constant", mixed()));
});

test("fcfs ignores scores: fcfs with slo-based is still fcfs", () => {
  assert.deepEqual(order("fcfs", "slo-based", mixed()), order("fcfs", "constant", mixed()));
});

test("sjf: smallest need first whatever the score policy, then arrival, then id", () => {
  const ps = [...mixed(), queued("a2", 100, 1500)];
  assert.deepEqual(order("sjf", "constant", ps), ["a2", "a", "c", "b", "z"]);
  assert.deepEqual(order("sjf", "slo-based", ps), order("sjf", "constant", ps));
});

test("slo-based scores grow by the age weight: +1 per second waited", () => {
  const p = queued("p", 100, NOW - 2000);
  assert.equal(priorityScore(p, "slo-based", 1e-3, NOW), 2);
  assert.equal(priorityScore(p, "constant", 1e-3, NOW), 0);
  assert.equal(priorityScore(p, "inverted-slo", 1e-3, NOW), -2);
});

test("pathological policies invert the order: least waited first (test-only templates)", () => {
  // Scores: z 0 (nothing waiting), a and b 98, c 99; reverse-priority takes the lowest first,
  // inverted-slo negates them; equal scores fall back to arrival, then id.
  assert.deepEqual(order("reverse-priority", "slo-based", mixed()), ["z", "a", "b", "c"]);
  assert.deepEqual(order("priority-fcfs", "inverted-slo", mixed()), ["z", "a", "b", "c"]);
});

test("ta keeps the original groups within a class: waiting programs smallest first", () => {
  assert.deepEqual(order("ta", "constant", mixed()), ["a", "c", "b", "z"]);
});

test("class comes before any within-class policy", () => {
  const ps = [queued("old-bulk", 10, 0, "bulk"), queued("new-sys", 5000, NOW, "system")];
  for (const policy of ["ta", "fcfs", "sjf", "priority-fcfs"] as const) {
    assert.deepEqual(order(policy, "slo-based", ps), ["new-sys", "old-bulk"], policy);
  }
});

test("in the scheduler, fcfs resumes the older big program where ta picks the smaller newer one", () => {
  const run = (queuePolicy: QueuePolicy) => {
    const h = createPriorityHarness({ capacity: 10_000, priority: { queuePolicy } });
    h.arrive("f1", "FILL", 9900);
    h.arrive("big", "BIG", 900);
    h.advance(10);
    h.arrive("small", "SMALL", 400);
    h.tick({ b0: h.sample(11_000) }); // room 1000: either fits, not both
    return h.dispatches.map((d) => d.requestId).filter((id) => id !== "f1");
  };
  assert.deepEqual(run("fcfs"), ["big"]);
  assert.deepEqual(run("ta"), ["small"]);
});
