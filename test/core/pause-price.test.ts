import assert from "node:assert/strict";
import { test } from "node:test";
import type { BackendMetricsSample } from "../../src/core/events.ts";
import { HOST_TRANSFER, REPREFILL } from "../../src/core/pause-price.ts";
import type { PausePrice, SchedulerPolicies } from "../../src/core/records.ts";
import { DEFAULT_SCHEDULER_CONFIG } from "../../src/core/scheduler.ts";
import {
  HOST_TIER_OVERCOMMIT,
  TAIL_PRESETS,
  TIER_ROTATION_MS,
} from "../../src/core/scheduler-constants.ts";
import { createHarness, sample } from "./harness.ts";

// The price of a pause (src/core/pause-price.ts), on the shipped defaults: where the engine's
// host KV tier holds every context on a backend and paused from it, a pause costs a transfer,
// admission is bounded by what GPU and tier hold together, the engine's queue is its rotation
// and a held request takes its turn after the rotation bound. Elsewhere the GPU bounds it.

const SHIPPED = DEFAULT_SCHEDULER_CONFIG;
const GPU = 2000;

const tier = (hostKvTokens?: number): Partial<BackendMetricsSample> =>
  hostKvTokens === undefined ? { hostKvTier: true } : { hostKvTier: true, hostKvTokens };

/** A and B, 800 and 900 tokens, in their tool calls on b0, its engine sampled with `extra`. */
function twoInToolCalls(extra: Partial<BackendMetricsSample>) {
  const h = createHarness({ backends: ["b0"], capacity: GPU, config: SHIPPED });
  h.tick({ b0: sample(GPU, extra) });
  h.turn("a1", "A", 800);
  h.turn("b1", "B", 900);
  return h;
}

test("where the host tier holds every context, admission runs past the GPU's KV up to the tier", () => {
  const h = twoInToolCalls(tier(10_000));
  assert.equal(h.backend("b0").pausePrice, "transfer");
  assert.equal(h.backend("b0").admissionCapacityTokens, 10_000);
  h.arrive("w1", "W", 1100); // 800 + 900 + 1100 > 2000: over the GPU, inside the tier
  assert.equal(h.dispatchOf("w1")?.backendId, "b0", "the engine rotates within the tier");
  h.arrive("x1", "X", 8000); // 800 + 900 + 1100 + 8000 > 10,000: past what the tier holds
  assert.equal(h.dispatchOf("x1"), undefined, "held: past GPU and tier together");
  assert.equal(h.program("X")?.state, "PAUSED");
  assert.deepEqual(h.scheduler.audit(), []);
});

test("packed under the GPU (the throughput preset), a tier's transfer admits only what the GPU holds", () => {
  const h = createHarness({
    backends: ["b0"],
    capacity: GPU,
    config: { ...SHIPPED, ...TAIL_PRESETS.throughput },
  });
  h.tick({ b0: sample(GPU, tier(10_000)) });
  h.turn("a1", "A", 800);
  h.turn("b1", "B", 900);
  const b = h.backend("b0");
  assert.equal(b.pausePrice, "transfer", "a pause still costs a transfer");
  assert.equal(b.admissionCapacityTokens, GPU);
  h.arrive("w1", "W", 1100); // over the GPU: held, where rotating would have sent it
  assert.equal(h.dispatchOf("w1"), undefined);
  assert.equal(h.program("W")?.state, "PAUSED");
  assert.deepEqual(h.scheduler.audit(), []);
});

test("without a tier of known size, or with contexts the tier cannot hold, the GPU bounds admission", () => {
  // No tier, one of unknown size, and one no larger than the GPU (it holds nothing more).
  for (const extra of [{}, tier(), tier(GPU)]) {
    const h = twoInToolCalls(extra);
    const why = JSON.stringify(extra);
    assert.equal(h.backend("b0").pausePrice, "prefill", why);
    assert.equal(h.backend("b0").admissionCapacityTokens, GPU, why);
    h.arrive("w1", "W", 1100);
    assert.equal(h.dispatchOf("w1"), undefined, `held for room on the GPU: ${why}`);
  }
});

test("an engine that queues is full where a pause costs a prefill, rotating where it costs a transfer", () => {
  for (const [extra, sent] of [
    [{}, false],
    [tier(10_000), true],
  ] as const) {
    const h = createHarness({ backends: ["b0"], capacity: GPU, config: SHIPPED });
    h.turn("a1", "A", 300);
    h.tick({ b0: sample(GPU, { ...extra, kvUsage: 0.2, running: 1, waiting: 3 }) });
    h.arrive("w1", "W", 300);
    assert.equal(h.dispatchOf("w1") !== undefined, sent, JSON.stringify(extra));
  }
});

test("a pause costs a prefill again once the contexts outgrow the tier by more than the overcommit", () => {
  const h = twoInToolCalls(tier(2500)); // 1700 of 2500
  assert.equal(h.backend("b0").pausePrice, "transfer");
  h.turn("b2", "B", 2900); // 3700: past the tier, within 1.5 × it
  assert.equal(h.backend("b0").pausePrice, "transfer", "the LRU loses a part, not all");
  assert.ok(HOST_TIER_OVERCOMMIT * 2500 < 800 + 3100);
  h.turn("b3", "B", 3100); // 3900 > 1.5 × 2500
  assert.equal(h.backend("b0").pausePrice, "prefill");
  assert.equal(h.backend("b0").admissionCapacityTokens, GPU);
});

test("the contexts a tier must hold include those of the programs paused from it", () => {
  for (const [hostKvTokens, price] of [
    [1150, "prefill"], // 1.5 × 1150 holds A's 1000, not A's and P's 1900
    [1300, "transfer"],
  ] as const) {
    const h = createHarness({ backends: ["b0"], capacity: 2 * GPU, config: SHIPPED });
    h.turn("p1", "P", 900);
    h.turn("a1", "A", 1000);
    h.tick({ b0: sample(1100) }); // a smaller GPU: P, the smaller, is paused
    assert.equal(h.program("P")?.state, "PAUSED");
    h.tick({ b0: sample(1100, tier(hostKvTokens)) });
    assert.equal(h.backend("b0").pausePrice, price, `a tier of ${hostKvTokens} tokens`);
  }
});

/**
 * A lends its room after a long tool call, W takes it, and A's return finds none: A is paused
 * from b0 and its request held. Then `waitMs` pass.
 */
function heldAfterLending(extra: Partial<BackendMetricsSample>, waitMs: number) {
  const h = createHarness({ backends: ["b0"], capacity: GPU, config: SHIPPED });
  h.tick({ b0: sample(GPU, extra) });
  h.turn("a1", "A", 1000);
  h.advance(SHIPPED.lendMaxHoldMs + 1000);
  h.tick({ b0: sample(GPU, extra) });
  assert.equal(h.program("A")?.lent, true, "its room is lent after the hold bound");
  h.arrive("w1", "W", 1700);
  assert.equal(h.dispatchOf("w1")?.backendId, "b0");
  h.arrive("a2", "A", 1100);
  assert.equal(h.program("A")?.state, "PAUSED", "no room left on its return");
  const parkedAt = h.now;
  h.advance(waitMs);
  h.tick({ b0: sample(GPU, extra) });
  return { h, parkedAt };
}

test("a request held where a pause costs a transfer takes its turn after the rotation bound", () => {
  const { h, parkedAt } = heldAfterLending(tier(2800), 0);
  assert.equal(h.backend("b0").pausePrice, "transfer");
  const due = h.scheduler.nextDeadline();
  assert.ok(due !== null && due <= parkedAt + TIER_ROTATION_MS, `next deadline ${due}`);
  h.advance(TIER_ROTATION_MS);
  h.tick({ b0: sample(GPU, tier(2800)) });
  assert.equal(h.program("W")?.markedForPause, true, "room is made on its own backend");
  assert.equal(h.dispatchOf("a2"), undefined, "not before W's turn ends");
  h.finish("w1");
  assert.equal(h.dispatchOf("a2")?.backendId, "b0", "its turn, on the backend holding it");
  assert.equal(h.program("W")?.state, "PAUSED");
  assert.deepEqual(h.scheduler.audit(), []);
});

test("where a pause costs a prefill, the same wait is not cut short before the ageing bound", () => {
  const { h } = heldAfterLending({}, TIER_ROTATION_MS);
  assert.equal(h.program("W")?.markedForPause, false, "nothing is made room for yet");
  assert.equal(h.program("A")?.state, "PAUSED");
  assert.ok(SHIPPED.ageingMs > TIER_ROTATION_MS);
});

test("the price is the core's policy: one given in its place decides the admission bound and the room", () => {
  // Priced by prefill whatever the engine keeps: the tier of 10,000 tokens no longer counts.
  const prefill = twoInToolCallsWith({ pausePrice: () => REPREFILL }, tier(10_000));
  assert.equal(prefill.backend("b0").pausePrice, "prefill");
  assert.equal(prefill.backend("b0").admissionCapacityTokens, GPU);
  prefill.arrive("w1", "W", 1100);
  assert.equal(prefill.dispatchOf("w1"), undefined, "held for room on the GPU");
  // Priced by transfer on a 4,000-token bound of the policy's own, with no tier reported.
  const own: PausePrice = { ...HOST_TRANSFER, admissionCapacity: () => 4000 };
  const transfer = twoInToolCallsWith({ pausePrice: () => own }, {});
  assert.equal(transfer.backend("b0").pausePrice, "transfer");
  assert.equal(transfer.backend("b0").admissionCapacityTokens, 4000);
  transfer.arrive("w1", "W", 1100);
  assert.equal(transfer.dispatchOf("w1")?.backendId, "b0", "admitted within the policy's bound");
  assert.equal(HOST_TRANSFER.returnWaitMs, TIER_ROTATION_MS);
  assert.equal(REPREFILL.returnWaitMs, null);
});

function twoInToolCallsWith(
  policies: Partial<SchedulerPolicies>,
  extra: Partial<BackendMetricsSample>,
) {
  const h = createHarness({ backends: ["b0"], capacity: GPU, config: SHIPPED, policies });
  h.tick({ b0: sample(GPU, extra) });
  h.turn("a1", "A", 800);
  h.turn("b1", "B", 900);
  return h;
}

test("the host link's measured speed is the engine's own loads, bytes over seconds, and unknown without them", () => {
  const h = createHarness({ backends: ["b0"], capacity: GPU, config: SHIPPED });
  h.tick({ b0: sample(GPU, tier(10_000)) });
  assert.equal(h.backend("b0").hostLoadBytesPerSecond, null, "no counters: unknown");
  h.tick({ b0: sample(GPU, { ...tier(10_000), hostLoadBytesTotal: 0, hostLoadSecondsTotal: 0 }) });
  assert.equal(h.backend("b0").hostLoadBytesPerSecond, null, "nothing loaded yet: unknown");
  h.tick({
    b0: sample(GPU, { ...tier(10_000), hostLoadBytesTotal: 6e10, hostLoadSecondsTotal: 2.5 }),
  });
  assert.equal(h.backend("b0").hostLoadBytesPerSecond, 2.4e10);
});
