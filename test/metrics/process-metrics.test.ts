import assert from "node:assert/strict";
import { test } from "node:test";
import { parsePrometheusText, sumOf } from "../../src/backends/prometheus-text.ts";
import type { Effects } from "../../src/core/effects.ts";
import { createRouterMetrics } from "../../src/metrics/router-metrics.ts";
import { createFakeScheduler } from "../runtime/fake-scheduler.ts";

/** The names the soak and the usual Node dashboards read. */
const STANDARD = [
  "process_resident_memory_bytes",
  "process_cpu_seconds_total",
  "process_start_time_seconds",
  "nodejs_heap_size_used_bytes",
  "nodejs_heap_size_total_bytes",
  "nodejs_eventloop_lag_p99_seconds",
  "nodejs_gc_duration_seconds",
];

/** An empty router's snapshot: no program, no backend. */
const empty = createFakeScheduler({} as Effects).snapshot;

test("with process metrics on, /metrics carries the process's RSS, CPU, heap and event-loop delay under prom-client's standard names", async () => {
  const m = createRouterMetrics({ snapshot: empty, process: true });
  const text = await m.render();
  const families = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((x) => x[1]));
  for (const name of STANDARD) assert.ok(families.has(name), `want ${name} in /metrics`);
  const f = parsePrometheusText(text);
  assert.ok((sumOf(f, "process_resident_memory_bytes") ?? 0) > 0, "RSS is read, not zero");
  assert.ok((sumOf(f, "nodejs_heap_size_used_bytes") ?? 0) > 0, "heap used is read");
  assert.ok(families.has("maitred_programs"), "the router's own series are still there");
});

test("routers made in one process share one set of process metrics: no event-loop monitor or GC observer per router", () => {
  const a = createRouterMetrics({ snapshot: empty, process: true });
  const b = createRouterMetrics({ snapshot: empty, process: true });
  for (const name of STANDARD) {
    const first = a.registry.getSingleMetric(name);
    assert.ok(first !== undefined, `${name} registered`);
    assert.equal(
      b.registry.getSingleMetric(name),
      first,
      `${name}: one object, not one per router`,
    );
  }
});

test("without process metrics (the default, for a router embedded in a caller's process) every series is maitred_*", async () => {
  const m = createRouterMetrics({ snapshot: empty });
  const names = [...(await m.render()).matchAll(/^# TYPE (\S+) /gm)].map((x) => x[1] as string);
  assert.ok(names.length > 0);
  for (const name of names) assert.ok(name.startsWith("maitred_"), `got ${name}`);
});

test("every series named *_total is a counter, as promtool check metrics requires (prom-client's three gauge totals are left out)", async () => {
  const m = createRouterMetrics({ snapshot: empty, process: true });
  const types = [...(await m.render()).matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((x) => ({
    name: x[1] as string,
    type: x[2] as string,
  }));
  const misnamed = types.filter((t) => t.name.endsWith("_total") && t.type !== "counter");
  assert.deepEqual(misnamed, [], "got these non-counters named *_total, want none");
  assert.ok(
    types.some((t) => t.name === "nodejs_active_handles"),
    "the per-type handle gauge stays",
  );
});
