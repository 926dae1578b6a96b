import assert from "node:assert/strict";
import { test } from "node:test";
import type { Decision } from "../../src/shadow/decisions.ts";
import type { ShadowDecision } from "../../src/shadow/shadow.ts";
import { smallRun } from "./helpers.ts";

/**
 * Shadow mode in the simulator: the default router routes, a tr core beside it decides on the
 * same events and records. Until its first decision that would have changed the traffic, the
 * events (and the engines' samples) are the ones a tr router would have had, so its decisions
 * must be tr's own, one for one.
 */

/** A decision without the shadow's comparison with the router, as tr itself records it. */
const own = (d: Decision): Decision => ({
  at: d.at,
  kind: d.kind,
  programId: d.programId,
  requestId: d.requestId,
  backend: d.backend,
  reason: d.reason,
  waitedMs: d.waitedMs,
});

/** Half a simulated minute: the first change comes within seconds on the tiny cache. */
const SHORT = { warmupMs: 0, durationMs: 30_000 };

/** tr's own decisions, and the shadow's beside the default router, on the same workload. */
function bothRuns(numBackends: number) {
  const tr: Decision[] = [];
  smallRun({ ...SHORT, numBackends, router: "tr", onDecision: (d) => tr.push(own(d)) });
  const shadowed: ShadowDecision[] = [];
  const { shadow } = smallRun({
    ...SHORT,
    numBackends,
    router: "default",
    shadow: { onDecision: (d) => shadowed.push(d) },
  });
  assert.ok(shadow !== undefined, "the run reports its shadow");
  assert.equal(shadow.errors, 0, "nothing failed inside the shadow");
  const first = shadowed.findIndex((d) => d.changesTraffic);
  assert.ok(first >= 0, "on the tiny cache tr must, at some point, have sent different traffic");
  assert.deepEqual(shadowed[first], shadow.firstChange, "the summary names the same decision");
  assert.deepEqual(
    shadowed.slice(0, first + 1).map(own),
    tr.slice(0, first + 1),
    `the shadow and tr part before decision ${first} (${JSON.stringify(shadowed[first])})`,
  );
  // Before it, every seat the shadow chose is the one the default router chose.
  for (const d of shadowed.slice(0, first))
    if (d.kind === "seat") assert.equal(d.actualBackend, d.backend, JSON.stringify(d));
  return { before: shadowed.slice(0, first), change: shadowed[first] };
}

test("two backends: the shadow's decisions are tr's own up to and including its first seat elsewhere", () => {
  const { before, change } = bothRuns(2);
  assert.equal(change.kind, "seat", "tr places a new program by room, default by program count");
  assert.notEqual(change.actualBackend, change.backend);
  assert.ok(
    before.filter((d) => d.kind === "seat").length >= 5,
    "several seats agreed with the router's before the first change",
  );
});

test("one backend: the shadow's decisions are tr's own, its pauses included, up to its first hold", () => {
  // One backend: every seat is the router's, so the first change is a request tr holds.
  const { before, change } = bothRuns(1);
  assert.equal(change.kind, "hold");
  assert.ok(before.filter((d) => d.kind === "seat").length >= 10, "seats before the hold");
  assert.ok(
    before.some((d) => d.kind === "pause"),
    "tr paused a program before it held a request, and the shadow did the same",
  );
});

test("on the tiny cache the shadow would have held and paused where the default router overflowed the engines", () => {
  const { report, shadow } = smallRun({
    ...SHORT,
    durationMs: 60_000,
    router: "default",
    shadow: {},
  });
  assert.ok(shadow !== undefined);
  assert.equal(report.scheduler.pauses, 0, "the router itself routed as default and paused nobody");
  assert.ok(shadow.decisions.hold > 0, "tr would have held requests");
  assert.ok(shadow.decisions.pause > 0, "tr would have paused programs");
  assert.equal(shadow.held.held, shadow.decisions.hold);
  const ends = shadow.held.ends;
  assert.equal(
    ends.seated + ends.rejected + ends.request_ended + (shadow.held.now ?? 0),
    shadow.held.held,
    "every hold has ended one way, or is still held",
  );
  assert.ok(shadow.engines.ticks > 0);
  assert.ok(
    shadow.engines.overflowTicks > 0 && shadow.engines.preemptions > 0,
    `the engines overflowed meanwhile: ${JSON.stringify(shadow.engines)}`,
  );
});

test("a shadow only runs beside the default router", () => {
  assert.throws(() => smallRun({ ...SHORT, router: "tr", shadow: {} }), /beside the default/);
});
