/**
 * The process's own figures on /metrics under prom-client's standard names
 * (`process_resident_memory_bytes`, `process_cpu_seconds_total`, `nodejs_heap_size_used_bytes`,
 * `nodejs_eventloop_lag_p99_seconds`, `nodejs_gc_duration_seconds`, …), so dashboards made for
 * any Node service read the router's memory, CPU and event-loop delay.
 *
 * They describe the process, not a router, so they are made once per process and the same
 * metric objects are registered in every registry that asks: prom-client's
 * `collectDefaultMetrics` starts an event-loop delay monitor and a GC observer on each call
 * and never stops them, so calling it per router (tests build hundreds in one process) would
 * leave one of each behind per router. A registry only holds references to its metrics, so a
 * router that is dropped leaves nothing behind.
 */
import { collectDefaultMetrics, Gauge, type Metric, Registry } from "prom-client";

/**
 * How often the event-loop delay monitor samples (ms). Each sample is the time between two of
 * its timers, so it includes this interval: an idle router reads about 10 ms in
 * `nodejs_eventloop_lag_p99_seconds`, and the delay the router adds is what lies beyond it.
 * Finer sampling would wake an idle router a thousand times a second.
 */
export const EVENT_LOOP_SAMPLING_MS = 10;

/**
 * prom-client's default metrics include three gauges named like counters
 * (`nodejs_active_handles_total`, `nodejs_active_requests_total`,
 * `nodejs_active_resources_total`). The `_total` suffix is reserved for counters, so
 * `promtool check metrics` rejects them, and each is only the sum over the `type` label of its
 * gauge without the suffix (`sum(nodejs_active_handles)`), which stays.
 */
const isGaugeNamedLikeCounter = (m: Metric) =>
  m instanceof Gauge && (m as unknown as { name: string }).name.endsWith("_total");

let shared: Metric[] | null = null;

/** The process's metrics, made on the first call. */
function processMetrics(): Metric[] {
  if (shared === null) {
    const own = new Registry();
    collectDefaultMetrics({ register: own, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLING_MS });
    shared = (own.getMetricsAsArray() as unknown as Metric[]).filter(
      (m) => !isGaugeNamedLikeCounter(m),
    );
  }
  return shared;
}

/** Registers the process's metrics (made once per process) in `registry`. */
export function addProcessMetrics(registry: Registry): void {
  for (const metric of processMetrics()) registry.registerMetric(metric);
}
