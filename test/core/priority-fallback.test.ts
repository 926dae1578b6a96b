import assert from "node:assert/strict";
import { test } from "node:test";
import type { PriorityClass, SchedulerConfig } from "../../src/core/api.ts";
import { createHarness, type Harness } from "./harness.ts";

/** A scenario that pauses, queues and resumes, so any change in tr's decisions shows. */
function scenario(h: Harness, withClasses = true): string[] {
  const cls = (c: PriorityClass) => (withClasses ? { priorityClass: c } : {});
  h.turn("a1", "A", 3000);
  h.turn("b1", "B", 2000);
  h.arrive("c1", "C", 4000, cls("interactive"));
  h.arrive("d1", "D", 3000, cls("bulk")); // no room: queued
  h.tick({ b0: h.sample(8000) }); // squeeze: A and B paused
  h.advance(1000);
  h.arrive("a2", "A", 3100, cls("system"));
  h.finish("c1");
  h.tick({ b0: h.sample(20_000) });
  return [
    ...h.dispatches.map((d) => `${d.requestId}@${d.backendId}+${d.pausedMs}`),
    ...h.rejects.map((r) => `reject ${r.requestId}`),
    `counters ${JSON.stringify(h.scheduler.snapshot().counters)}`,
  ];
}

function run(priority: SchedulerConfig["priority"], withClasses = true) {
  const h = createHarness({
    backends: ["b0"],
    capacity: 10_000,
    config: priority === undefined ? {} : { priority },
  });
  return { h, trace: scenario(h, withClasses) };
}

test("priorities off: class fields on events change nothing and the snapshot has no priority view", () => {
  const off = run(undefined);
  assert.equal(off.h.scheduler.prioritiesEnabled, false);
  assert.equal(off.h.scheduler.snapshot().priority, undefined);
  assert.equal(off.h.program("A")?.priorityClass, undefined);
  assert.deepEqual(off.h.scheduler.drainQueueWaitObservations(), []);
  assert.ok(off.trace.length > 3, "the scenario dispatches something");
  assert.deepEqual(off.trace, run(undefined, false).trace, "same trace with no class fields");
});

test("reservations that do not fit: an error is logged and tr runs exactly as with priorities off", () => {
  const off = run(undefined);
  const broken = run({
    classes: { system: { reservedShare: 0.7 }, interactive: { reservedShare: 0.7 } },
  });
  assert.equal(broken.h.scheduler.prioritiesEnabled, false);
  const err = broken.h.logs.find((l) => l.level === "error");
  assert.ok(err, "the broken config is logged at error");
  assert.match(JSON.stringify(err.fields), /sums to 1\.4/);
  assert.deepEqual(broken.trace, off.trace, "same decisions as priorities off");
  assert.equal(broken.h.scheduler.snapshot().priority, undefined);
});

test("a priority section of the wrong shape never throws: priorities off, routing up", () => {
  const bad = run({ classes: "all" as never, ageWeightPerMs: Number.NaN });
  assert.equal(bad.h.scheduler.prioritiesEnabled, false);
  assert.deepEqual(bad.trace, run(undefined).trace);
});

test("default mode with a priority section warns and stays a plain proxy", () => {
  const h = createHarness({
    backends: ["b0"],
    capacity: 10_000,
    config: { mode: "default", priority: {} },
  });
  assert.equal(h.scheduler.prioritiesEnabled, false);
  assert.ok(h.logs.some((l) => l.level === "warn" && /tr router/.test(l.msg)));
});

test("a valid section turns priorities on and the program view shows the latest class", () => {
  const on = run({});
  assert.equal(on.h.scheduler.prioritiesEnabled, true);
  assert.equal(on.h.program("A")?.priorityClass, "system", "A's latest request was system");
  assert.equal(on.h.program("B")?.priorityClass, "default", "no class given: default");
});
