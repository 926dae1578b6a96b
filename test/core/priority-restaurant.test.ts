import assert from "node:assert/strict";
import { test } from "node:test";
import { resolveRequestClass } from "../../src/core/api.ts";
import { MAX_PAUSE_MS } from "../../src/core/scheduler-constants.ts";
import { createHarness } from "./harness.ts";

/**
 * Seed 000's restaurant, with the built-in class defaults: tables are KV tokens (capacity
 * 100,000), guests are programs, walk-ins are `bulk`, VIPs `interactive`. With the defaults,
 * system reserves 2 % and interactive 8 %, so walk-ins may fill 90,000.
 */
function restaurant() {
  const h = createHarness({ backends: ["b0"], capacity: 100_000, config: { priority: {} } });
  const walkIns = (n: number, opts: { served?: boolean; eating?: boolean } = {}) => {
    for (let i = 0; i < n; i++) {
      h.arrive(`w${i}`, `W${i}`, 9900, { priorityClass: "bulk" }); // 10,000 a table
      if (opts.eating) assert.equal(h.scheduler.tryCommitFirstByte(`w${i}`), true);
      if (opts.served) {
        h.usage(`w${i}`, 9900);
        h.finish(`w${i}`);
      }
    }
  };
  return { h, walkIns };
}

test("restaurant: reserved tables seat a VIP at once while walk-ins wait at the door", () => {
  const { h, walkIns } = restaurant();
  walkIns(10, { served: true });
  assert.equal(h.dispatches.length, 9, "nine walk-ins seated, the tenth waits: 10,000 held");
  h.arrive("vip", "VIP", 4900, { priorityClass: "interactive" });
  assert.equal(h.dispatchOf("vip")?.pausedMs, 0, "the VIP does not wait");
  assert.equal(h.cancels.length + h.scheduler.snapshot().counters.pauses, 0, "nobody was bumped");
});

test("restaurant: with every table taken, a walk-in whose food has not arrived is bumped for a VIP", () => {
  const { h, walkIns } = restaurant();
  walkIns(9); // seated, ordered, nothing served yet
  h.arrive("vip1", "VIP1", 7900, { priorityClass: "interactive" }); // the 8,000 reserved
  h.arrive("vip2", "VIP2", 4900, { priorityClass: "interactive" }); // only system's 2,000 left
  assert.deepEqual(
    h.cancels.map((c) => [c.requestId, c.error.status]),
    [["w8", 503]],
    "one walk-in, the last seated",
  );
  assert.equal(h.dispatchOf("vip2")?.backendId, "b0");
});

test("restaurant: a guest already eating is never bumped; the VIP waits in line", () => {
  const { h, walkIns } = restaurant();
  walkIns(9, { eating: true });
  h.arrive("vip1", "VIP1", 7900, { priorityClass: "interactive" });
  h.arrive("vip2", "VIP2", 4900, { priorityClass: "interactive" });
  assert.equal(h.cancels.length, 0);
  assert.equal(h.dispatchOf("vip2"), undefined);
  assert.equal(h.scheduler.snapshot().priority?.classes.interactive.queued, 1);
});

test("restaurant: the host seats the highest tier first when tables free", () => {
  const { h, walkIns } = restaurant();
  walkIns(9, { eating: true }); // 90,000, all streaming: none may be bumped
  h.arrive("sys", "SYS", 9900, { priorityClass: "system" }); // the last 10,000
  h.arrive("walk", "WALK", 900, { priorityClass: "bulk" });
  h.advance(10);
  h.arrive("reg", "REG", 900, { priorityClass: "default" });
  h.advance(10);
  h.arrive("vip", "VIP", 900, { priorityClass: "interactive" });
  assert.equal(h.dispatches.length, 10, "the latecomers all wait at the door");
  h.tick({ b0: h.sample(120_000) }); // more tables
  const order = h.dispatches.slice(10).map((d) => d.requestId);
  assert.deepEqual(order, ["vip", "reg", "walk"], "highest tier first, whoever came first");
});

test("restaurant: a walk-in who waited past the threshold is called out of turn", () => {
  const { h, walkIns } = restaurant();
  walkIns(9, { served: true });
  h.arrive("walk", "WALK", 900, { priorityClass: "bulk" }); // waits: the rest is held
  // Bulk waits by tr's bounds: the ageing bound, or the max pause with ageing off (as here).
  const threshold = h.scheduler.snapshot().priority?.classes.bulk.settings.starvationMs as number;
  assert.equal(threshold, MAX_PAUSE_MS, "ageing off: starved at the max pause");
  h.advance(threshold);
  h.arrive("reg", "REG", 900, { priorityClass: "default" });
  h.tick();
  assert.equal(h.dispatchOf("walk")?.pausedMs, threshold, "seated, in reserved-but-idle room");
  assert.equal(h.dispatchOf("reg"), undefined, "the regular is held back by the VIP reservation");
  assert.equal(h.scheduler.snapshot().priority?.classes.bulk.promotions, 1);
});

test("restaurant: a free-tier tenant asking for system is seated as bulk and counted as clamped", () => {
  const asked = resolveRequestClass("system", "bulk");
  assert.ok(asked.ok && asked.clamped);
  if (!asked.ok) return;
  const { h, walkIns } = restaurant();
  walkIns(9, { served: true });
  h.arrive("free", "FREE", 900, {
    priorityClass: asked.priorityClass,
    classClamped: asked.clamped,
  });
  assert.equal(h.dispatchOf("free"), undefined, "no reserved table and no bumping for it");
  assert.equal(h.program("FREE")?.priorityClass, "bulk");
  assert.equal(h.scheduler.snapshot().priority?.classes.bulk.clamps, 1);
});
