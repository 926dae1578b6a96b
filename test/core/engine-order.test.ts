import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { SchedulerConfig } from "../../src/core/api.ts";
import type { EngineOrderName, PriorityPolarity } from "../../src/core/records.ts";
import { DEFAULT_SCHEDULER_CONFIG } from "../../src/core/scheduler.ts";
import { createHarness, sample } from "./harness.ts";

/**
 * The order the core hands an engine that schedules by priority (engine-order.ts), on the
 * shipped defaults: each request's key is its arrival plus its order's offset, capped by the tail
 * bound, sent in whole seconds in the backend's polarity, and only to a declared backend.
 * Capacity is ample unless a test says otherwise, so every request is dispatched on arrival.
 */
function harness(
  order: EngineOrderName | undefined,
  polarity: Record<string, PriorityPolarity> = { b0: "lower-first" },
  config: Partial<SchedulerConfig> = {},
) {
  return createHarness({
    backends: Object.keys({ b0: 1, ...polarity }),
    config: {
      ...DEFAULT_SCHEDULER_CONFIG,
      mode: "default",
      ...(order === undefined ? {} : { engineOrder: order }),
      ...config,
    },
    capacity: 10_000_000,
    priorityScheduling: polarity,
  });
}

const priorityOf = (h: ReturnType<typeof harness>, id: string) => {
  const d = h.dispatchOf(id);
  assert.ok(d !== undefined, `${id} was not dispatched`);
  return d.priority ?? null;
};

describe("the engine order", () => {
  test("arrival: whole seconds since the first request handed over, lower first", () => {
    const h = harness("arrival");
    h.arrive("r1", "p1", 40_000);
    h.advance(1_500);
    h.arrive("r2", "p2", 1_000);
    h.advance(2_600);
    h.arrive("r3", "p3", 1_000);
    assert.deepEqual(
      ["r1", "r2", "r3"].map((id) => priorityOf(h, id)),
      [0, 1, 4],
    );
  });

  test("smallest: a context's tokens at 250 a second, so a short one that came later goes first", () => {
    const h = harness("smallest");
    h.arrive("long", "p1", 10_000); // 40 s of offset
    h.advance(1_000);
    h.arrive("short", "p2", 1_000); // 4 s, arriving 1 s later
    assert.equal(priorityOf(h, "long"), 40);
    assert.equal(priorityOf(h, "short"), 5);
  });

  test("the offset is capped by the tail preset's bound: bounded ages at 240 s, throughput at its 1,800 s max pause", () => {
    const bounded = harness("smallest");
    bounded.arrive("huge", "p1", 1_000_000);
    assert.equal(priorityOf(bounded, "huge"), 240);
    const throughput = harness("smallest", undefined, { ageingMs: 0, maxPauseMs: 1_800_000 });
    throughput.arrive("huge", "p1", 1_000_000);
    assert.equal(priorityOf(throughput, "huge"), 1_800);
  });

  test("a class with a shorter bound (priority classes) or a request's own max wait caps its offset", () => {
    // Priority classes run under tr.
    const h = harness("smallest", undefined, { priority: {}, mode: "tr" });
    h.arrive("bulkish", "p1", 20_000); // default class: 80 s
    h.arrive("urgent", "p2", 20_000, { priorityClass: "interactive" }); // starves after 5 s
    h.arrive("patient", "p3", 20_000, { maxWaitMs: 10_000 });
    assert.equal(priorityOf(h, "bulkish"), 80);
    assert.equal(priorityOf(h, "urgent"), 5);
    assert.equal(priorityOf(h, "patient"), 10);
  });

  test("uncached counts only a step that was answered, and not a context paused at a re-prefill's price", () => {
    const failed = harness("uncached");
    failed.arrive("s1", "p1", 10_000);
    failed.finish("s1", "upstream_error");
    failed.arrive("s2", "p1", 10_000);
    assert.equal(priorityOf(failed, "s2"), 40, "the failed step left nothing on the backend");
  });

  test("higher-first backends get the same order negated; an undeclared one gets none", () => {
    const h = harness("smallest", { b0: "higher-first", b1: "lower-first" });
    h.arrive("a", "p1", 10_000);
    const first = h.dispatchOf("a");
    assert.ok(first !== undefined);
    assert.equal(first.priority, first.backendId === "b0" ? -40 : 40);
    const plain = harness("smallest", {});
    plain.arrive("b", "p1", 10_000);
    assert.equal(priorityOf(plain, "b"), null);
  });

  test("uncached: a step continuing a context its backend answered waits only for its new tokens", () => {
    const h = harness("uncached");
    h.arrive("s1", "p1", 10_000);
    assert.equal(priorityOf(h, "s1"), 40, "nothing of it is on the backend yet");
    h.usage("s1", 10_000);
    h.finish("s1");
    h.advance(3_000);
    h.arrive("s2", "p1", 10_500);
    assert.equal(priorityOf(h, "s2"), 3 + 2, "3 s later, 500 new tokens at 250 a second");
  });

  test("auto, the shipped order: smallest where a pause costs a re-prefill, arrival where a host tier holds the contexts", () => {
    const prefill = harness(undefined);
    prefill.arrive("r", "p1", 10_000);
    assert.equal(priorityOf(prefill, "r"), 40);
    const tier = harness(undefined);
    tier.tick({ b0: sample(10_000_000, { hostKvTier: true, hostKvTokens: 40_000_000 }) });
    assert.equal(tier.backend("b0").pausePrice, "transfer");
    tier.arrive("r", "p1", 10_000);
    assert.equal(priorityOf(tier, "r"), 0);
  });

  test("a request the router held keeps its arrival: it goes before everything that came while it waited", () => {
    const h = createHarness({
      backends: ["b0"],
      config: { ...DEFAULT_SCHEDULER_CONFIG, engineOrder: "arrival" },
      capacity: 30_000,
      priorityScheduling: { b0: "lower-first" },
    });
    h.arrive("big", "p1", 25_000);
    h.usage("big", 25_000);
    h.finish("big");
    h.advance(1_000);
    h.arrive("big2", "p1", 25_100);
    h.advance(1_000);
    h.arrive("held", "p2", 20_000);
    assert.equal(h.dispatchOf("held"), undefined, "no room: held");
    h.advance(30_000);
    h.usage("big2", 25_200);
    h.finish("big2");
    h.scheduler.handle({ kind: "program_release", now: h.now, programId: "p1" });
    h.tick();
    const d = h.dispatchOf("held");
    assert.ok(d !== undefined && d.pausedMs > 0, "seated once p1 left");
    assert.equal(d.priority, 2, "its arrival, 2 s after the first request, not its seating");
  });
});
