import assert from "node:assert/strict";
import { test } from "node:test";
import { type PromFamilies, parsePrometheusText } from "../../src/backends/prometheus-text.ts";
import type { BackendMetricsSample, SchedulerEvent } from "../../src/core/events.ts";
import { createScheduler } from "../../src/core/scheduler.ts";
import { createRouterMetrics } from "../../src/metrics/router-metrics.ts";

/**
 * The class metrics from a real core with priorities on: the scheduler is driven through a
 * queue-full rejection, a queued request later dispatched, a clamp and a client leaving the
 * queue, and the scrape must show each under its class and outcome.
 */

const B = "http://b0";
const sample = (capacityTokens: number): BackendMetricsSample => ({
  capacityTokens,
  kvUsage: 0,
  running: 0,
  waiting: 0,
  preemptionsTotal: 0,
  prefixCacheQueriesTotal: 0,
  prefixCacheHitsTotal: 0,
  promptTokensTotal: 0,
  generationTokensTotal: 0,
});

function prioritized() {
  const scheduler = createScheduler({
    config: {
      mode: "tr",
      placement: "best-fit",
      actingTokenWeight: 1,
      useActingTokenDecay: false,
      bufferPerProgram: 100,
      maxPauseMs: 1_800_000,
      idleTimeoutMs: 1_800_000,
      progressIntervalTokens: 20,
      unhealthyAfterFailures: 3,
      priority: { classes: { default: { queueDepth: 1 }, system: { reservedShare: 0.1 } } },
    },
    backends: [{ id: B, type: "vllm" }],
    effects: { dispatch() {}, reject() {}, cancel() {}, log() {} },
  });
  const arrive = (now: number, id: string, extra: Partial<SchedulerEvent> = {}) =>
    scheduler.handle({
      kind: "request_arrived",
      now,
      requestId: id,
      programId: `p-${id}`,
      messageChars: [400],
      final: false,
      priorityClass: "default",
      ...extra,
    } as SchedulerEvent);
  return { scheduler, arrive };
}

const value = (f: PromFamilies, name: string, labels: Record<string, string>) =>
  f.get(name)?.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

test("admissions, clamps, queue waits and room render by class from the core's snapshot", async () => {
  const { scheduler, arrive } = prioritized();
  // Capacity unknown: nothing is placeable, the first default request queues.
  arrive(0, "r1", { classClamped: true });
  arrive(500, "r2"); // the default queue (depth 1) is full → 429
  arrive(600, "r3", { priorityClass: "bulk" });
  scheduler.handle({
    kind: "request_finished",
    now: 700,
    requestId: "r3",
    outcome: "client_closed",
  });
  scheduler.handle({ kind: "tick", now: 2000, metrics: { [B]: sample(10_000) } });
  const m = createRouterMetrics({ snapshot: () => scheduler.snapshot(), priority: true });
  // What the runtime does after each event: the core's queue waits go to the metrics.
  const observeWaits = () => {
    for (const o of scheduler.drainQueueWaitObservations()) m.queueWaitObserved(o);
  };
  observeWaits();
  const f = parsePrometheusText(await m.render());
  const adm = (cls: string, outcome: string) =>
    value(f, "maitred_priority_admissions_total", { class: cls, outcome });
  assert.equal(adm("default", "queued"), 1);
  assert.equal(adm("default", "queue_full"), 1);
  assert.equal(adm("bulk", "queued"), 1);
  assert.equal(adm("bulk", "client_closed"), 1, "a client leaving the queue counts as 499");
  assert.equal(adm("system", "admitted"), 0, "every class × outcome is exported, zeros included");
  assert.equal(value(f, "maitred_priority_clamps_total", { class: "default" }), 1);
  assert.equal(
    value(f, "maitred_priority_queue_wait_seconds_count", { class: "default" }),
    1,
    "r1 waited in the queue, then was dispatched by the tick",
  );
  assert.equal(value(f, "maitred_priority_queue_wait_seconds_sum", { class: "default" }), 2);
  assert.equal(value(f, "maitred_priority_queued_requests", { class: "default" }), 0);
  assert.equal(
    value(f, "maitred_priority_reserved_tokens", { backend: B, class: "system" }),
    1000,
    "10 % of 10 000 tokens",
  );
  assert.ok((value(f, "maitred_priority_used_tokens", { backend: B, class: "default" }) ?? 0) > 0);
  assert.equal(value(f, "maitred_priority_held_tokens", { backend: B, class: "system" }), 1000);

  arrive(3000, "r4", { priorityClass: "bulk", classClamped: true });
  observeWaits();
  const again = parsePrometheusText(await m.render());
  assert.equal(
    value(again, "maitred_priority_admissions_total", { class: "bulk", outcome: "admitted" }),
    1,
    "counters follow the core between scrapes",
  );
  assert.equal(value(again, "maitred_priority_clamps_total", { class: "bulk" }), 1);
  assert.equal(
    value(again, "maitred_priority_queue_wait_seconds_count", { class: "default" }),
    1,
    "queue waits are drained once",
  );
});

test("without priorities no priority metric is declared at all", async () => {
  const { scheduler } = prioritized();
  const m = createRouterMetrics({ snapshot: () => scheduler.snapshot() });
  const text = await m.render();
  assert.doesNotMatch(text, /maitred_priority_/);
});

test("class metrics carry only class, outcome and backend labels, never a program id", async () => {
  const { scheduler, arrive } = prioritized();
  arrive(0, "secret");
  const m = createRouterMetrics({
    snapshot: () => scheduler.snapshot(),
    priority: true,
  });
  const text = await m.render();
  assert.doesNotMatch(text, /p-secret/);
  for (const [name, samples] of parsePrometheusText(text)) {
    if (!name.startsWith("maitred_priority_")) continue;
    for (const s of samples) {
      for (const label of Object.keys(s.labels)) {
        assert.ok(["class", "outcome", "backend", "le"].includes(label), `${name}: label ${label}`);
      }
    }
  }
});
