import assert from "node:assert/strict";
import { test } from "node:test";
import { dequeue, enqueue } from "../../src/core/queue.ts";
import { DEFAULT_SCHEDULER_CONFIG } from "../../src/core/scheduler-config.ts";
import { createProgramRecord, createSchedulerState } from "../../src/core/scheduler-state.ts";

const noop = () => {};
const effects = { dispatch: noop, reject: noop, cancel: noop, log: noop };

test("the lazily ordered queue stays bounded when programs cycle without a resume pass", () => {
  const state = createSchedulerState(DEFAULT_SCHEDULER_CONFIG, [], effects, {} as never);
  const p = createProgramRecord("p", 1, null, 0);
  const q = createProgramRecord("q", 2, null, 0);
  enqueue(state, q);
  for (let i = 0; i < 10_000; i++) {
    enqueue(state, p);
    dequeue(state, p);
  }
  assert.ok(
    state.queueOrder.length < 2_000,
    `got ${state.queueOrder.length} entries, want bounded`,
  );
  assert.ok(state.queueOrder.includes(q), "live entries survive compaction");
  assert.equal(state.queue.size, 1);
});

test("the need floor is a lower bound of every queued program's need", () => {
  const state = createSchedulerState(DEFAULT_SCHEDULER_CONFIG, [], effects, {} as never);
  const big = createProgramRecord("big", 1, null, 0);
  big.tokens = 5000;
  const small = createProgramRecord("small", 2, null, 0);
  small.tokens = 300;
  enqueue(state, big);
  assert.equal(state.needFloor, 5100);
  enqueue(state, small);
  assert.equal(state.needFloor, 400);
});
