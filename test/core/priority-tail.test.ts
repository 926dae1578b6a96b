import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_CLASS_SETTINGS, resolvePriorityConfig } from "../../src/core/api.ts";
import { TAIL_PRESETS } from "../../src/core/scheduler-constants.ts";
import { createHarness } from "./harness.ts";

const classBounds = (r: ReturnType<typeof resolvePriorityConfig>, name: number) => {
  assert.ok(r.ok);
  const c = r.config.classes[name];
  return [c.starvationMs, c.queueTimeoutMs];
};
const DEFAULT = 2; // system, interactive, default, bulk
const BULK = 3;

test("default and bulk wait by the bounds in force; ageing off starves them at the max pause", () => {
  const { balanced, throughput } = TAIL_PRESETS;
  assert.deepEqual(classBounds(resolvePriorityConfig({}, balanced), BULK), [600_000, 900_000]);
  assert.deepEqual(classBounds(resolvePriorityConfig({}, balanced), DEFAULT), [600_000, 900_000]);
  assert.deepEqual(
    classBounds(resolvePriorityConfig({}, throughput), BULK),
    [1_800_000, 1_800_000],
    "no ageing: no promotion before the forced seat, no 408 before it either",
  );
  // The gateway-like classes keep their own, whatever the preset.
  const r = resolvePriorityConfig({}, throughput);
  assert.ok(r.ok);
  assert.deepEqual(r.config.classes[0], DEFAULT_CLASS_SETTINGS.system);
  // What the section sets is kept.
  const given = resolvePriorityConfig({ classes: { bulk: { starvationMs: 5_000 } } }, throughput);
  assert.deepEqual(classBounds(given, BULK), [5_000, 1_800_000]);
});

for (const withPriority of [false, true]) {
  test(`a request due for its forced seat and its class timeout in the same tick is seated (${withPriority ? "priorities on" : "priorities off: the control, no class timeout"})`, () => {
    const h = createHarness({
      backends: ["b0"],
      capacity: 2000,
      config: {
        ageingMs: 240_000,
        maxPauseMs: 300_000,
        growthHeadroomSteps: 0,
        ...(withPriority ? { priority: {} } : {}),
      },
    });
    const cls = withPriority ? { priorityClass: "bulk" as const } : {};
    h.arrive("a1", "A", 1500, cls); // A runs a long turn
    h.arrive("k1", "K", 1000, cls); // K does not fit: held
    h.advance(240_000);
    h.tick({ b0: h.sample(2000, { kvUsage: 0.8, running: 1, waiting: 0 }) });
    assert.equal(h.program("A")?.markedForPause, true, "room is made for K: A is marked");
    assert.equal(h.dispatchOf("k1"), undefined, "A is still in its turn");
    h.advance(60_000); // the max pause, which is also bulk's queue timeout
    h.tick({ b0: h.sample(2000, { kvUsage: 0.8, running: 1, waiting: 0 }) });
    assert.equal(
      h.rejectOf("k1"),
      undefined,
      `want no rejection, got ${h.rejectOf("k1")?.error.code}`,
    );
    assert.equal(h.dispatchOf("k1")?.backendId, "b0", "seated at the max pause");
  });
}
