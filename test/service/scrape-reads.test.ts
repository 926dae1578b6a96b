import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type PromFamilies,
  parsePrometheusText,
  sumOf,
} from "../../src/backends/prometheus-text.ts";
import { resolveRouterConfig } from "../../src/config/load-config.ts";
import { createManualClock, type ManualClock } from "../../src/runtime/clock.ts";
import { createRouter, type Router } from "../../src/service/service.ts";
import { silentLogger } from "../../src/util/logger.ts";
import { sample } from "../core/harness.ts";

/**
 * A /metrics scrape only reads: the waits the core (and a shadow beside it) observe are counted
 * when the event that ended them is handled, so scrapes in a row after the same events agree,
 * whoever makes them: the router's own `/metrics` (`render()`) or a program that merged the
 * router's registry into its own and reads that. The router is built but never started, so it
 * polls nothing: the test plays its backend's engine, handing the core its figures as ticks,
 * on one manual clock.
 */

const B = "http://127.0.0.1:9";

/** An engine sample that says room is there: nothing used, running or waiting. */
const roomy = (capacityTokens: number) =>
  sample(capacityTokens, { kvUsage: 0, running: 0, waiting: 0 });

async function routerWith(flags: Record<string, unknown>) {
  const config = resolveRouterConfig({ flags: { backends: B, ...flags } });
  const clock = createManualClock(1_000_000);
  const router = await createRouter(config, { logger: silentLogger, clock });
  return { router, clock };
}

function arrive(router: Router, clock: ManualClock, id: string, chars: number): void {
  router.loop.requests.open(id);
  router.loop.send({
    kind: "request_arrived",
    now: clock.now(),
    requestId: id,
    programId: `program-${id}`,
    messageChars: [chars],
    final: false,
  });
}

function tick(router: Router, clock: ManualClock, capacityTokens: number): void {
  router.loop.send({ kind: "tick", now: clock.now(), metrics: { [B]: roomy(capacityTokens) } });
}

/**
 * r1 arrives before any figure of the engine's: tr holds it until the first tick, which seats
 * it 2 s later. r2 asks for far more than the backend's 10 000 tokens: tr holds it too.
 */
function firstEvents(router: Router, clock: ManualClock): void {
  arrive(router, clock, "r1", 400);
  clock.advance(2000);
  tick(router, clock, 10_000);
  arrive(router, clock, "r2", 200_000);
}

/** The new event: the engine reports room for r2, which is seated. */
function lastEvent(router: Router, clock: ManualClock): void {
  clock.advance(3000);
  tick(router, clock, 1_000_000);
}

/** Three scrapes: two in a row, then one after the last event. */
async function scrapes(router: Router, clock: ManualClock): Promise<PromFamilies[]> {
  firstEvents(router, clock);
  // A host that merged the router's registry into its own reads it without `render()`.
  const host = parsePrometheusText(await router.metrics.registry.metrics());
  const own = parsePrometheusText(await router.metrics.render());
  lastEvent(router, clock);
  const after = parsePrometheusText(await router.metrics.registry.metrics());
  return [host, own, after];
}

function assertCounts(scraped: PromFamilies[], name: string, why: string): void {
  const counts = scraped.map((f) => sumOf(f, name));
  assert.deepEqual(
    counts,
    [1, 1, 2],
    `${name}: got ${JSON.stringify(counts)} over three scrapes, want [1, 1, 2]: ${why}`,
  );
}

test("two scrapes in a row show the same pause and queue-wait counts, and a third one more after a new event", async () => {
  const { router, clock } = await routerWith({ router: "tr", priority: true });
  try {
    const scraped = await scrapes(router, clock);
    const why = "r1 waited for the first tick, r2 for room; a scrape takes nothing away";
    assertCounts(scraped, "maitred_pause_duration_seconds_count", why);
    assertCounts(scraped, "maitred_priority_queue_wait_seconds_count", why);
    assert.deepEqual(
      scraped.map((f) => sumOf(f, "maitred_queue_length")),
      [1, 1, 0],
      "each scrape, through the registry too, reads the core as it is then",
    );
    assert.equal(sumOf(scraped[2], "maitred_pause_duration_seconds_sum"), 5, "2 s, then 3 s");
  } finally {
    await router.close();
  }
});

test("two scrapes in a row show the same shadow hold counts, and a third one more after a new event", async () => {
  const { router, clock } = await routerWith({ router: "default", shadow: true });
  try {
    const scraped = await scrapes(router, clock);
    assertCounts(
      scraped,
      "maitred_shadow_hold_seconds_count",
      "the shadow held r1 until the first tick and r2 until room; a scrape takes nothing away",
    );
    assert.equal(
      sumOf(scraped[2], "maitred_pause_duration_seconds_count"),
      0,
      "the router itself, routing as default, held nothing",
    );
  } finally {
    await router.close();
  }
});
