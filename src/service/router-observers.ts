/**
 * The router's Prometheus metrics over its core (and a shadow core beside it), and the run-loop
 * hook that hands them every wait the cores observed, after the event that ended it, so that a
 * scrape only reads (src/runtime/observation-taps.ts).
 */
import type { Scheduler } from "../core/api.ts";
import type { BackendMetricsSample } from "../core/events.ts";
import { createRouterMetrics, type RouterMetrics } from "../metrics/router-metrics.ts";
import { createShadowMetrics } from "../metrics/shadow-metrics.ts";
import { takesNewPrograms } from "../proxy/admin-views.ts";
import { observationHooks, tap } from "../runtime/observation-taps.ts";
import type { RunLoopHooks } from "../runtime/run-loop.ts";
import type { Shadow } from "../shadow/shadow.ts";
import type { LogBufferStats } from "./router-api.ts";
import type { RouterPhase } from "./router-lifecycle.ts";

export interface RouterObserversOptions {
  /** The router's core, read by every scrape and drained of its waits after every event. */
  scheduler: Scheduler;
  shadow: Shadow | null;
  /** Priorities in force: the class metrics are declared. */
  priorities: boolean;
  /** Freshest engine sample per backend (the poller's). */
  latestSample(backendId: string): BackendMetricsSample | undefined;
  /** `--cell`. */
  cell: string;
  phase: RouterPhase;
  processMetrics: boolean;
  responseHomes(): number;
  logBuffer?: LogBufferStats;
}

export interface RouterObservers {
  metrics: RouterMetrics;
  /** For the run loop: after each event, the waits observed in it go to the histograms. */
  waits: RunLoopHooks;
}

export function createRouterObservers(o: RouterObserversOptions): RouterObservers {
  const { scheduler, shadow } = o;
  const metrics = createRouterMetrics({
    snapshot: () => scheduler.snapshot(),
    priority: o.priorities,
    latestSample: o.latestSample,
    cell: {
      name: o.cell,
      // The scrape's own snapshot: one per scrape, shared with every other series.
      takesNewPrograms: (snapshot) => takesNewPrograms(o.phase.current(), snapshot).takes,
    },
    process: o.processMetrics,
    sizes: { responseHomes: o.responseHomes },
    ...(o.logBuffer === undefined ? {} : { logBuffer: o.logBuffer }),
  });
  const taps = [
    tap(() => scheduler.drainPauseObservations(), metrics.pauseObserved),
    tap(() => scheduler.drainQueueWaitObservations?.() ?? [], metrics.queueWaitObserved),
  ];
  if (shadow !== null) {
    const watched = createShadowMetrics({ registry: metrics.registry, shadow });
    taps.push(
      tap(() => shadow.drainHoldObservations(), watched.hold),
      tap(() => shadow.drainPauseObservations(), watched.pause),
    );
  }
  return { metrics, waits: observationHooks(taps) };
}
