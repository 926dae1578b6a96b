import assert from "node:assert/strict";
import { test } from "node:test";
import type { HoldView, SchedulerSnapshot } from "../../src/core/api.ts";
import { createManualClock } from "../../src/runtime/clock.ts";
import { createUiFeed } from "../../src/ui/ui-feed.ts";

function snapshotWith(used: number, kv: number | null): SchedulerSnapshot {
  return {
    mode: "tr",
    backends: [
      {
        id: "http://b0",
        healthy: true,
        capacityTokens: 1000,
        usedTokens: used,
        remainingTokens: 1000 - used,
        truth: kv === null ? null : { kvUsage: kv, running: 1, waiting: 0, preempting: false },
        activePrograms: 1,
        lentPrograms: 0,
      },
    ],
    programs: [
      {
        id: "t1\u001fp-paused",
        status: "ACTING",
        state: "PAUSED",
        totalTokens: 10,
        backend: null,
        steps: 2,
        pausedSince: 0,
        parentProgramId: null,
        children: [],
      },
      {
        id: "p-active",
        status: "REASONING",
        state: "ACTIVE",
        totalTokens: 5,
        backend: "http://b0",
        steps: 1,
        pausedSince: null,
        parentProgramId: null,
        children: [],
      },
    ],
    queueLength: 1,
  } as unknown as SchedulerSnapshot;
}

test("the feed counts steps of the last minute, keeps the core's decisions with reasons, and samples belief beside truth", () => {
  const clock = createManualClock(0);
  let snap = snapshotWith(400, 0.25);
  const feed = createUiFeed({
    clock,
    snapshot: () => snap,
    holds: () => [],
    isDraining: () => false,
  });
  feed.start();
  for (let i = 0; i < 3; i++)
    feed.hooks.onEvent?.({
      kind: "request_finished",
      now: 1000 * i,
      requestId: `r${i}`,
      outcome: "ok",
    });
  feed.hooks.onEvent?.({
    kind: "request_finished",
    now: 2500,
    requestId: "bad",
    outcome: "upstream_error",
  });
  feed.hooks.onLog?.("debug", "program paused", {
    programId: "t1\u001fp-paused",
    backend: "http://b0",
    why: "over capacity",
  });
  clock.advance(2000);
  snap = snapshotWith(900, null); // the engine's figure is unknown now
  clock.advance(2000);
  const f = feed.frame() as {
    stepsPerMin: number;
    decisions: { msg: string; programId: string; tenant: string; why: string }[];
    programs: { id: string; tenant: string | null; pausedForMs: number | null }[];
    history: {
      t: number[];
      belief: Record<string, (number | null)[]>;
      truth: Record<string, (number | null)[]>;
    };
  };
  assert.equal(f.stepsPerMin, 3, "only steps that ended well count");
  assert.deepEqual(
    {
      msg: f.decisions[0]?.msg,
      programId: f.decisions[0]?.programId,
      tenant: f.decisions[0]?.tenant,
      why: f.decisions[0]?.why,
    },
    { msg: "program paused", programId: "p-paused", tenant: "t1", why: "over capacity" },
  );
  assert.deepEqual(
    f.programs.map((p) => [p.id, p.tenant, p.pausedForMs]),
    [
      ["p-paused", "t1", 4000],
      ["p-active", null, null],
    ],
    "paused programs first, with how long",
  );
  assert.deepEqual(f.history.t, [0, 2, 4]);
  assert.deepEqual(f.history.belief["http://b0"], [0.4, 0.4, 0.9]);
  assert.deepEqual(f.history.truth["http://b0"], [0.25, 0.25, null], "unknown stays unknown");
  clock.advance(60_000);
  assert.equal(
    (feed.frame() as { stepsPerMin: number }).stepsPerMin,
    0,
    "a minute later they have left the window",
  );
  feed.stop();
  assert.equal(clock.pendingTimers(), 0);
});

test("a held program shows its place in the queue, how long it waited and when its bounds come", () => {
  const clock = createManualClock(10_000);
  const hold: HoldView = {
    programId: "t1\u001fp-paused",
    requestId: "req-1",
    position: 2,
    waitingPrograms: 3,
    parkedAt: 4_000,
    waitedMs: 5_000,
    roomAt: 604_000,
    roomBound: "ageing",
    seatAt: 904_000,
    maxWaitAt: null,
    queueTimeoutAt: null,
  };
  const feed = createUiFeed({
    clock,
    snapshot: () => snapshotWith(400, 0.25),
    holds: () => [hold],
    isDraining: () => false,
  });
  const f = feed.frame() as {
    heldPrograms: number;
    programs: { id: string; hold: Record<string, number | null> | null }[];
  };
  assert.equal(f.heldPrograms, 1);
  assert.deepEqual(
    f.programs.map((p) => [p.id, p.hold]),
    [
      ["p-paused", { position: 2, waitedMs: 6_000, roomInMs: 594_000, seatInMs: 894_000 }],
      ["p-active", null],
    ],
    "waited by the page's clock, the bounds as time left",
  );
});

test("sub-agents are listed under their parent, depth first, paused roots still first", () => {
  const clock = createManualClock(10_000);
  const program = (
    id: string,
    parent: string | null,
    children: string[],
    pausedSince: number | null,
  ) => ({
    id,
    status: "ACTING",
    state: pausedSince === null ? "ACTIVE" : "PAUSED",
    totalTokens: 1,
    backend: null,
    steps: 1,
    pausedSince,
    parentProgramId: parent,
    children,
  });
  const snapshot = {
    mode: "tr",
    backends: [],
    queueLength: 0,
    programs: [
      program("lead", null, ["w1", "w2"], null),
      program("w2", "lead", [], null),
      program("other", null, [], 0), // paused: listed first
      program("w1", "lead", ["h"], null),
      program("h", "w1", [], null),
    ],
  } as unknown as SchedulerSnapshot;
  const feed = createUiFeed({
    clock,
    snapshot: () => snapshot,
    holds: () => [],
    isDraining: () => false,
  });
  const f = feed.frame() as { programs: { id: string; depth: number; subagents: number }[] };
  assert.deepEqual(
    f.programs.map((p) => [p.id, p.depth, p.subagents]),
    [
      ["other", 0, 0],
      ["lead", 0, 2],
      ["w1", 1, 1],
      ["h", 2, 0],
      ["w2", 1, 0],
    ],
  );
});
