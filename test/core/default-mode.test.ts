import assert from "node:assert/strict";
import { test } from "node:test";
import { createHarness } from "./harness.ts";

test("default mode: a new program goes to the healthy backend with the fewest programs", () => {
  const h = createHarness({ backends: ["b0", "b1"], config: { mode: "default" } });
  h.arrive("a1", "A", 5000); // no capacity known: default mode does not care
  h.arrive("b1", "B", 10);
  h.arrive("c1", "C", 10);
  assert.deepEqual(
    ["a1", "b1", "c1"].map((id) => h.dispatchOf(id)?.backendId),
    ["b0", "b1", "b0"],
  );
});

test("default mode: programs stay on their backend and are never paused", () => {
  const h = createHarness({ backends: ["b0", "b1"], config: { mode: "default" }, capacity: 100 });
  h.turn("a1", "A", 5000);
  h.turn("b1", "B", 5000);
  h.arrive("a2", "A", 6000);
  h.tick();
  h.tick();
  assert.equal(h.dispatchOf("a2")?.backendId, "b0");
  const c = h.scheduler.snapshot().counters;
  assert.deepEqual([c.pauses, c.marks], [0, 0]);
  assert.equal(h.program("A")?.totalTokens, 6000, "books are still kept");
  assert.equal(h.scheduler.snapshot().mode, "default");
});

test("default mode: a host KV tier that holds every context lends nothing and pauses no one", () => {
  const h = createHarness({
    backends: ["b0"],
    config: { mode: "default", lendAfterToolTimes: 1 },
    capacity: 100,
  });
  h.tick({ b0: h.sample(100, { hostKvTier: true, hostKvTokens: 10_000_000 }) });
  h.turn("a1", "A", 5000);
  assert.equal(h.program("A")?.lent, false);
  h.turn("b1", "B", 5000);
  h.arrive("a2", "A", 6000);
  assert.equal(h.dispatchOf("a2")?.backendId, "b0", "sent on, not paused on its return");
  assert.deepEqual(h.scheduler.snapshot().counters.pauses, 0);
});

test("default mode: a program whose backend failed moves to a healthy one", () => {
  const h = createHarness({ backends: ["b0", "b1"], config: { mode: "default" } });
  h.turn("a1", "A", 10);
  for (let i = 0; i < 3; i++) h.tick({ b0: null });
  h.arrive("a2", "A", 10);
  assert.equal(h.dispatchOf("a2")?.backendId, "b1");
});
