import assert from "node:assert/strict";
import { test } from "node:test";
import type { RequestOutcome } from "../../src/core/events.ts";
import { createHarness } from "./harness.ts";

const OUTCOMES: RequestOutcome[] = [
  "ok",
  "upstream_error",
  "client_closed",
  "timeout",
  "backend_unreachable",
  "cancelled",
];

for (const outcome of OUTCOMES) {
  test(`request_finished(${outcome}) ends the step: REASONING → ACTING with the last known tokens`, () => {
    const h = createHarness({ backends: ["b0"], capacity: 10_000 });
    h.arrive("a1", "A", 400);
    assert.equal(h.program("A")?.status, "REASONING");
    h.finish("a1", outcome);
    const a = h.program("A");
    assert.equal(a?.status, "ACTING", `got ${a?.status} after ${outcome}`);
    assert.equal(a?.inFlight, 0);
    assert.equal(a?.totalTokens, 400, "the estimate, as no usage came");
    const b = h.backend("b0");
    assert.deepEqual([b.reasoningTokens, b.actingTokens], [0, 400]);
  });
}

test("a parked request that finishes (client gone) leaves the queue", () => {
  const h = createHarness({ backends: ["b0"], capacity: 1000 });
  h.arrive("f1", "F", 800);
  h.arrive("w1", "W", 300);
  assert.equal(h.scheduler.snapshot().queueLength, 1);
  h.finish("w1", "client_closed");
  assert.equal(h.scheduler.snapshot().queueLength, 0);
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "F" });
  assert.equal(h.dispatchOf("w1"), undefined, "a gone client is never dispatched");
});

test("concurrent requests of one program: REASONING while any runs, tokens never summed", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.arrive("r1", "P", 500);
  h.arrive("r2", "P", 500);
  assert.equal(h.program("P")?.inFlight, 2);
  assert.equal(h.backend("b0").reasoningTokens, 500, "one shared context, not 1000");
  h.usage("r1", 600);
  h.finish("r1");
  assert.equal(h.program("P")?.status, "REASONING", "r2 still runs");
  assert.equal(h.backend("b0").reasoningTokens, 600);
  h.usage("r2", 650);
  h.finish("r2");
  assert.equal(h.program("P")?.status, "ACTING");
  assert.deepEqual([h.backend("b0").reasoningTokens, h.backend("b0").actingTokens], [0, 650]);
  assert.equal(h.backend("b0").activePrograms, 1);
});

test("parking applies to every request of a paused program, and resume dispatches them all", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.turn("p1", "P", 100);
  h.arrive("f1", "F", 700);
  h.tick({ b0: h.sample(850) }); // pause P
  assert.equal(h.program("P")?.state, "PAUSED");
  h.arrive("p2", "P", 100);
  h.arrive("p3", "P", 100);
  assert.equal(h.program("P")?.parkedRequests, 2);
  h.finish("f1");
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "F" });
  assert.deepEqual(
    h.dispatches
      .filter((d) => d.requestId === "p2" || d.requestId === "p3")
      .map((d) => d.backendId),
    ["b0", "b0"],
  );
  assert.equal(h.program("P")?.inFlight, 2);
});

test("anonymous requests are admitted by room like programs, and leave no program behind", () => {
  const h = createHarness({ backends: ["b0", "b1"], capacity: 1000 });
  h.arrive("f1", "F", 800); // b0
  h.arrive("n1", null, 500); // b1: the fewest tokens, with room
  assert.equal(h.dispatchOf("n1")?.backendId, "b1");
  assert.equal(h.backend("b1").anonymousInFlight, 1);
  assert.equal(h.backend("b1").usedTokens, 600, "its tokens and its headroom");
  h.arrive("n2", null, 600); // need 700: no room anywhere, so it waits like a program would
  assert.equal(h.dispatchOf("n2"), undefined);
  assert.equal(h.scheduler.snapshot().programs.length, 1, "no shared 'default' program");
  h.finish("n1", "upstream_error"); // b1 frees: n2 goes there
  assert.equal(h.dispatchOf("n2")?.backendId, "b1");
  h.finish("n2");
  assert.deepEqual([h.backend("b1").anonymousInFlight, h.backend("b1").usedTokens], [0, 0]);
  assert.equal(h.scheduler.snapshot().pausedPrograms, 0, "anonymous programs end with it");
});

test("token books: usage replaces the estimate, the ratio learns, new messages are estimated", () => {
  const h = createHarness({ backends: ["b0"], capacity: 100_000 });
  h.arrive("a1", "A", 0, { messageChars: [1000] });
  assert.equal(h.program("A")?.totalTokens, 200, "1000 chars at the initial 5 chars/token");
  h.usage("a1", 300, 250); // sample 1000/250 = 4 chars/token, assigned directly
  h.finish("a1");
  assert.equal(h.program("A")?.totalTokens, 300);
  // user + assistant (counted by usage) + a new tool message of 800 chars → 300 + 800/4
  h.arrive("a2", "A", 0, { messageChars: [1000, 400, 800] });
  assert.equal(h.program("A")?.totalTokens, 500);
});

test("streaming progress grows the books every interval of completion tokens", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.arrive("a1", "A", 100);
  const progress = (n: number) =>
    h.scheduler.handle({
      kind: "request_progress",
      now: h.now,
      requestId: "a1",
      completionTokens: n,
    });
  progress(10);
  assert.equal(h.program("A")?.totalTokens, 100, "below the 20-token interval");
  progress(25);
  assert.equal(h.program("A")?.totalTokens, 125);
  h.usage("a1", 140, 100);
  progress(60);
  assert.equal(h.program("A")?.totalTokens, 140, "usage is the truth once it came");
});

test("bad input is answered, never thrown: duplicate ids and garbage message sizes", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.arrive("a1", "A", 0, { messageChars: [Number.NaN, -5, 50] });
  assert.equal(h.program("A")?.totalTokens, 10);
  h.arrive("a1", "B", 10);
  assert.equal(h.rejectOf("a1")?.error.status, 400);
  h.finish("nope");
  h.scheduler.handle({
    kind: "request_usage",
    now: h.now,
    requestId: "nope",
    usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
  });
  h.scheduler.handle({ kind: "program_release", now: h.now, programId: "nope" });
  h.scheduler.handle({ kind: "backend_failure", now: h.now, backendId: "nope" });
  h.tick({ nope: h.sample(5) } as never);
  assert.equal(h.scheduler.snapshot().programs.length, 1);
});
