import assert from "node:assert/strict";
import { test } from "node:test";
import { createHarness } from "./harness.ts";

test("after 3 failed polls a backend is unhealthy: no new placements, its running requests run on", () => {
  const h = createHarness({ backends: ["b0", "b1"], capacity: 10_000 });
  h.arrive("p1", "P", 100); // b0
  h.arrive("q1", "Q", 500); // b1
  h.arrive("anon", null, 50); // b0 (fewest tokens)
  assert.equal(h.dispatchOf("anon")?.backendId, "b0");
  h.tick({ b0: null });
  h.tick({ b0: null });
  assert.equal(h.backend("b0").healthy, true, "two failures are not enough");
  h.tick({ b0: null });
  assert.equal(h.backend("b0").healthy, false);
  h.tick({ b0: null });
  assert.equal(h.cancels.length, 0, "a failing /metrics cuts no stream");
  h.arrive("r1", "R", 100);
  assert.equal(h.dispatchOf("r1")?.backendId, "b1", "new work goes elsewhere");
  h.finish("p1", "ok");
  h.finish("anon", "ok");
  assert.equal(h.backend("b0").anonymousInFlight, 0, "the running requests ended as usual");
  assert.equal(h.backend("b0").reasoningPrograms, 0);
});

test("a program on an unhealthy backend is re-placed on its next request", () => {
  const h = createHarness({ backends: ["b0", "b1"], capacity: 10_000 });
  h.arrive("p1", "P", 100);
  for (let i = 0; i < 3; i++)
    h.scheduler.handle({ kind: "backend_failure", now: h.now, backendId: "b0" });
  assert.equal(h.backend("b0").healthy, false, "forward failures count too");
  h.finish("p1", "cancelled");
  assert.equal(h.program("P")?.status, "ACTING");
  h.arrive("p2", "P", 120);
  assert.equal(h.dispatchOf("p2")?.backendId, "b1");
  assert.equal(h.program("P")?.backend, "b1");
  assert.equal(h.scheduler.snapshot().counters.migrations, 1);
  assert.equal(h.backend("b0").activePrograms, 0, "its books left b0");
});

test("a forward the backend refused takes it out of placement at once; a good poll brings it back", () => {
  const h = createHarness({ backends: ["b0", "b1"], capacity: 10_000 });
  h.scheduler.handle({ kind: "backend_failure", now: h.now, backendId: "b0", down: true });
  assert.equal(h.backend("b0").healthy, false);
  h.arrive("a1", "A", 100);
  assert.equal(h.dispatchOf("a1")?.backendId, "b1");
  h.tick({}); // every backend answers its poll
  assert.equal(h.backend("b0").healthy, true);
});

test("an unhealthy backend gets no new placements and returns after one good poll", () => {
  const h = createHarness({ backends: ["b0", "b1"], capacity: 10_000 });
  for (let i = 0; i < 3; i++) h.tick({ b0: null });
  h.arrive("a1", "A", 100);
  h.arrive("n1", null, 100);
  assert.equal(h.dispatchOf("a1")?.backendId, "b1");
  assert.equal(h.dispatchOf("n1")?.backendId, "b1");
  h.tick();
  assert.equal(h.backend("b0").healthy, true);
  h.arrive("b1r", "B", 100);
  assert.equal(h.dispatchOf("b1r")?.backendId, "b0");
});

test("with no healthy backend an arriving request is rejected 503, never parked", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  for (let i = 0; i < 3; i++) h.tick({ b0: null });
  h.arrive("a1", "A", 100);
  h.arrive("n1", null, 100);
  assert.deepEqual(
    h.rejects.map((r) => [r.requestId, r.error.code, r.error.status]),
    [
      ["a1", "no_healthy_backend", 503],
      ["n1", "no_healthy_backend", 503],
    ],
  );
  assert.equal(h.scheduler.snapshot().queueLength, 0);
});

test("capacity is learned from the first sample that carries it and kept through nulls", () => {
  const h = createHarness({ backends: ["b0"] });
  h.tick({ b0: h.sample(null) });
  h.arrive("a1", "A", 100);
  assert.equal(h.dispatchOf("a1"), undefined, "unknown capacity: no tr placement");
  h.arrive("n1", null, 100);
  assert.equal(h.dispatchOf("n1"), undefined, "anonymous requests are admitted by room too");
  h.tick({ b0: h.sample(5000) });
  assert.equal(h.dispatchOf("a1")?.backendId, "b0");
  assert.equal(h.dispatchOf("n1")?.backendId, "b0");
  h.tick({ b0: h.sample(null) });
  assert.equal(h.backend("b0").capacityTokens, 5000);
});

test("shared tokens come from engine truth and lower what a backend counts as used", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.arrive("a1", "A", 3000);
  h.arrive("b1", "B", 3000);
  h.firstToken("a1");
  h.firstToken("b1");
  // Engine holds 4000 of our 6000; the credit is the minimum of the last 3 samples.
  for (let i = 0; i < 3; i++) h.tick({ b0: h.sample(10_000, { kvUsage: 0.4, waiting: 0 }) });
  assert.equal(h.backend("b0").sharedTokens, 2000);
  assert.equal(h.backend("b0").usedTokens, 6000 - 2000 + 200);
  h.tick({ b0: h.sample(10_000, { kvUsage: 0.4, waiting: 3 }) });
  assert.equal(h.backend("b0").sharedTokens, 0, "a backlog in the engine is not sharing");
});

test("a request still prefilling (no first token yet) gives no shared credit", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.arrive("a1", "A", 3000);
  h.arrive("b1", "B", 3000);
  h.firstToken("a1");
  // B's prompt is only partly in the engine: kvUsage shows 3000 + a chunk of B's 3000.
  for (let i = 0; i < 3; i++) h.tick({ b0: h.sample(10_000, { kvUsage: 0.35, waiting: 0 }) });
  assert.equal(h.backend("b0").sharedTokens, 0, "got credit for B's unprefilled prompt");
  h.firstToken("b1");
  for (let i = 0; i < 3; i++) h.tick({ b0: h.sample(10_000, { kvUsage: 0.5, waiting: 0 }) });
  assert.equal(h.backend("b0").sharedTokens, 1000, "both prefilled: 6000 counted, 5000 held");
});

test("the shared credit is the minimum of the last 3 samples: a one-sample gap never counts", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.arrive("a1", "A", 4000);
  h.firstToken("a1");
  for (let i = 0; i < 3; i++) h.tick({ b0: h.sample(10_000, { kvUsage: 0.3, waiting: 0 }) });
  assert.equal(h.backend("b0").sharedTokens, 1000);
  h.tick({ b0: h.sample(10_000, { kvUsage: 0.1, waiting: 0 }) }); // a 3000-token gap, once
  assert.equal(h.backend("b0").sharedTokens, 1000, "the spike is not credited");
  h.tick({ b0: h.sample(10_000, { kvUsage: 0.4, waiting: 0 }) });
  assert.equal(h.backend("b0").sharedTokens, 0, "a smaller gap counts at once");
});

test("a program whose step ended leaves the credit: its KV is idle, not shared", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.arrive("a1", "A", 4000);
  h.firstToken("a1");
  h.usage("a1", 4000);
  h.finish("a1");
  assert.equal(h.program("A")?.status, "ACTING");
  for (let i = 0; i < 3; i++) h.tick({ b0: h.sample(10_000, { kvUsage: 0, waiting: 0 }) });
  assert.equal(h.backend("b0").sharedTokens, 0, "ACTING tokens never enter the credit");
});

test("a backend whose metrics lack the KV usage gauge gets no invented room", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  for (let i = 0; i < 4; i++) {
    h.arrive(`a${i}`, `A${i}`, 2000);
    h.firstToken(`a${i}`);
  }
  for (let i = 0; i < 3; i++)
    h.tick({ b0: h.sample(10_000, { kvUsage: null, waiting: 0, running: 4 }) });
  const b = h.backend("b0");
  assert.equal(b.sharedTokens, 0, "no credit from a gauge that is not there");
  assert.equal(b.truth?.roomTokens, null, "the engine's room is unknown");
  h.arrive("late", "L", 2000);
  assert.equal(h.dispatchOf("late"), undefined, "the backend is full by the books: it waits");
  assert.ok(b.usedTokens <= 10_000);
});

test("a backend whose polls have never answered is unhealthy after its first failed poll, so a first request is answered 503 at once, not held", () => {
  const h = createHarness({ backends: ["b0"] });
  h.tick({ b0: null });
  assert.equal(h.backend("b0").healthy, false, "nothing was ever known of it");
  h.arrive("p1", "P", 100);
  assert.equal(h.rejectOf("p1")?.error.code, "no_healthy_backend", "answered on arrival");
  assert.equal(h.scheduler.snapshot().queueLength, 0, "nothing held");
});

test("a backend that has answered once needs the usual run of failed polls", () => {
  const h = createHarness({ backends: ["b0"], capacity: 10_000 });
  h.tick({ b0: null });
  assert.equal(h.backend("b0").healthy, true, "one failure of a backend seen up is not enough");
});
