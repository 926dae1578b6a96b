import assert from "node:assert/strict";
import { test } from "node:test";
import { createHarness } from "./harness.ts";

// The one room rule (src/core/room.ts): the books beside the engine's report. Capacity 10,000,
// flat buffer 100 per program.

function oneProgram() {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.arrive("a1", "A", 6000); // books: 6000 + 100
  h.firstToken("a1");
  return h;
}

test("unknown truth: admission reads the books alone", () => {
  const h = oneProgram();
  h.tick({ b0: h.sample(10_000) }); // no KV gauge, no waiting count
  const b = h.backend("b0");
  assert.equal(b.truth?.roomTokens, null);
  assert.equal(b.remainingTokens, 10_000 - 6100);
});

test("the engine shows more room than the books: the room is used", () => {
  const h = oneProgram();
  // The engine holds 2000 tokens (most of A's prompt was a shared prefix); nothing waits.
  h.tick({ b0: h.sample(10_000, { kvUsage: 0.2, waiting: 0, running: 1 }) });
  const b = h.backend("b0");
  // 8000 free − nothing acting − nothing pending since the sample − one step of A's growth.
  assert.equal(b.truth?.roomTokens, 8000 - 100);
  assert.equal(b.remainingTokens, 7900, "the larger of books (3900) and truth (7900)");
  assert.equal(b.truth?.gapTokens, 7900 - 3900);
  h.arrive("w1", "W", 5000); // need 5100: fits by the engine's report only
  assert.equal(h.dispatchOf("w1")?.backendId, "b0");
  assert.equal(h.backend("b0").truth?.pendingTokens, 5000, "counted until the next sample");
  h.arrive("x1", "X", 5000); // the truth room left is 2900 − its growth: no
  assert.equal(h.dispatchOf("x1"), undefined);
});

test("an engine with requests waiting counts as full, whatever the books say", () => {
  const h = oneProgram();
  h.tick({ b0: h.sample(10_000, { kvUsage: 0.2, waiting: 2, running: 1 }) });
  const b = h.backend("b0");
  assert.equal(b.truth?.full, true);
  assert.equal(b.remainingTokens, 0, "min(books, 0)");
  h.arrive("w1", "W", 100);
  assert.equal(h.dispatchOf("w1"), undefined);
});

test("an engine that preempted since the previous sample counts as full", () => {
  const h = oneProgram();
  h.tick({ b0: h.sample(10_000, { kvUsage: 0.6, waiting: 0, running: 1, preemptionsTotal: 0 }) });
  assert.equal(h.backend("b0").truth?.full, false, "the counter did not move");
  h.tick({ b0: h.sample(10_000, { kvUsage: 0.6, waiting: 0, running: 1, preemptionsTotal: 5 }) });
  assert.equal(h.backend("b0").truth?.full, true);
  h.tick({ b0: h.sample(10_000, { kvUsage: 0.6, waiting: 0, running: 1, preemptionsTotal: 5 }) });
  assert.equal(h.backend("b0").truth?.full, false, "no new preemption: room again");
});

test("a failed poll makes the engine's figures unknown until the next sample", () => {
  const h = oneProgram();
  h.tick({ b0: h.sample(10_000, { kvUsage: 0.2, waiting: 0, running: 1 }) });
  h.tick({ b0: null });
  const b = h.backend("b0");
  assert.equal(b.truth, null);
  assert.equal(b.remainingTokens, 3900, "the books alone");
});

test("programs in a tool call keep their prefixes out of the engine's free room", () => {
  const h = oneProgram();
  h.usage("a1", 6000);
  h.finish("a1"); // A ACTING: the engine counts its blocks as free, but they cache its prefix
  h.tick({ b0: h.sample(10_000, { kvUsage: 0, waiting: 0, running: 0 }) });
  assert.equal(h.backend("b0").truth?.roomTokens, 10_000 - 6000);
});
