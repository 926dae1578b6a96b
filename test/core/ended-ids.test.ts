import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ENDED_ID_LIMIT,
  ENDED_ID_TTL_MS,
  endedRecently,
  rememberEnded,
} from "../../src/core/ended-ids.ts";
import type { SchedulerPolicies } from "../../src/core/records.ts";
import { DEFAULT_SCHEDULER_CONFIG } from "../../src/core/scheduler.ts";
import { createSchedulerState } from "../../src/core/scheduler-state.ts";
import { createHarness } from "./harness.ts";

const IDLE_MS = 60_000;

test("ended ids stay bounded by ENDED_ID_LIMIT after twice as many ends within the hour, the oldest forgotten first", () => {
  // The core's own state and functions; no backend or policy is read on this path.
  const state = createSchedulerState(
    DEFAULT_SCHEDULER_CONFIG,
    [],
    { dispatch() {}, reject() {}, cancel() {}, log() {} },
    {} as SchedulerPolicies,
  );
  const ends = 2 * ENDED_ID_LIMIT;
  let most = 0;
  for (let i = 0; i < ends; i++) {
    // An end every 10 ms: both limits' worth within the hour.
    state.now = i * 10;
    rememberEnded(state, `p${i}`, "idle");
    most = Math.max(most, state.ended.size);
  }
  assert.ok(ends * 10 < ENDED_ID_TTL_MS, "every end is within the hour of the last");
  assert.equal(most, ENDED_ID_LIMIT, `got at most ${most} ids remembered, want ${ENDED_ID_LIMIT}`);
  assert.ok(endedRecently(state, `p${ends - 1}`) !== undefined, "the newest is remembered");
  assert.equal(
    endedRecently(state, `p${ends - ENDED_ID_LIMIT}`)?.why,
    "idle",
    "so is the oldest kept",
  );
  assert.equal(
    endedRecently(state, `p${ends - ENDED_ID_LIMIT - 1}`),
    undefined,
    "older: forgotten",
  );
});

test("ended ids are forgotten when their hour is over, at the next tick, with no new end needed", () => {
  const h = createHarness({
    backends: ["b0"],
    capacity: 100_000,
    config: { idleTimeoutMs: IDLE_MS },
  });
  // Programs with a budget, never released by their client: the idle lease ends them, and
  // their ids are remembered so that one coming back goes on under the budget it had.
  for (let i = 0; i < 100; i++) {
    h.arrive(`r${i}`, `p${i}`, 10, { budget: { steps: 50 } });
    h.usage(`r${i}`, 10);
    h.finish(`r${i}`);
  }
  h.advance(IDLE_MS + 1);
  h.tick();
  const snap = h.scheduler.snapshot();
  assert.equal(snap.counters.idleReleases, 100);
  assert.equal(snap.endedPrograms, 100, "each ended id is remembered");
  h.advance(ENDED_ID_TTL_MS - 1);
  h.tick();
  assert.equal(h.scheduler.snapshot().endedPrograms, 100, "still within their hour");
  h.advance(1);
  h.tick();
  assert.equal(h.scheduler.snapshot().endedPrograms, 0, "the hour is over: none remembered");
});

test("ids taken back as soon as they are remembered leave the age queue bounded, and the next end still forgets the oldest", () => {
  const state = createSchedulerState(
    DEFAULT_SCHEDULER_CONFIG,
    [],
    { dispatch() {}, reject() {}, cancel() {}, log() {} },
    {} as SchedulerPolicies,
  );
  let longest = 0;
  for (let i = 0; i < 3 * ENDED_ID_LIMIT; i++) {
    state.now = i; // all within the hour: nothing expires
    rememberEnded(state, `p${i}`, "steps");
    // Its client carries on at once: the id is taken back (takeEnded's deletion).
    if (i % 2 === 1) state.ended.delete(`p${i}`);
    longest = Math.max(longest, state.endedOrder.ids.length - state.endedOrder.head);
  }
  assert.ok(longest <= 2 * ENDED_ID_LIMIT + 1, `the queue held ${longest} places`);
  // The last end was taken back: the newest LIMIT − 1 even ids stay, from p{LIMIT + 2} on.
  assert.equal(state.ended.size, ENDED_ID_LIMIT - 1);
  const oldestKept = `p${ENDED_ID_LIMIT + 2}`;
  assert.ok(endedRecently(state, oldestKept) !== undefined, "the oldest kept is remembered");
  assert.equal(endedRecently(state, `p${ENDED_ID_LIMIT}`), undefined, "older: forgotten");
  rememberEnded(state, "x", "idle"); // fills the last place
  assert.ok(endedRecently(state, oldestKept) !== undefined);
  rememberEnded(state, "y", "idle"); // forgets the oldest, past the stale places of taken ids
  assert.equal(endedRecently(state, oldestKept), undefined, "forgotten first");
  assert.ok(endedRecently(state, `p${ENDED_ID_LIMIT + 4}`) !== undefined, "the next one stays");
  assert.equal(state.ended.size, ENDED_ID_LIMIT);
});

test("behind an id still remembered, ids taken back at once cannot grow the age queue past twice the limit", () => {
  const state = createSchedulerState(
    DEFAULT_SCHEDULER_CONFIG,
    [],
    { dispatch() {}, reject() {}, cancel() {}, log() {} },
    {} as SchedulerPolicies,
  );
  rememberEnded(state, "old", "steps"); // stays at the front: within its hour, under the limit
  let longest = 0;
  for (let i = 0; i < 3 * ENDED_ID_LIMIT; i++) {
    state.now = i;
    rememberEnded(state, `p${i}`, "steps");
    state.ended.delete(`p${i}`); // taken back by its client at once
    longest = Math.max(longest, state.endedOrder.ids.length - state.endedOrder.head);
  }
  assert.ok(longest <= 2 * ENDED_ID_LIMIT + 1, `the queue held ${longest} places`);
  assert.ok(endedRecently(state, "old") !== undefined, "the live id is still remembered");
  assert.equal(state.ended.size, 1);
});
