/**
 * The shadow's metrics (`maitred serve --shadow`, src/shadow/shadow.ts): what a tr core beside
 * the router would have decided, declared on the router's one registry only while a shadow
 * runs, so a router without one exports exactly what it did before. Counters are synced from
 * the shadow's monotonic counts at each scrape; hold and pause lengths are observed into their
 * histograms by the runtime after the event that ended them (`hold`, `pause`), so a scrape only
 * reads and any number of scrapers see the same counts. Labels are bounded: the decision kind
 * and how a hold ended, never a program or request id.
 */
import { Gauge, Histogram, type Registry } from "prom-client";
import { DECISION_KINDS, HOLD_ENDS, type HoldObservation, type Shadow } from "../shadow/shadow.ts";
import { byLabel, single, syncedCounter } from "./synced-counter.ts";

export interface ShadowMetricsOptions {
  registry: Registry;
  shadow: Pick<Shadow, "counts" | "gauges">;
}

export interface ShadowMetrics {
  /** A hold of the shadow ended (seated, rejected, or its request ended first). */
  hold(observation: HoldObservation): void;
  /** A program the shadow paused was resumed after `ms`. */
  pause(ms: number): void;
}

/** Holds and pauses span a tick (seconds) to the max pause (minutes). */
const WAIT_BUCKETS_S = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600];

export function createShadowMetrics(options: ShadowMetricsOptions): ShadowMetrics {
  const { shadow } = options;
  const registers = [options.registry];

  /** A Prometheus counter following one monotonic count of the shadow. */
  const synced = (name: string, help: string, value: () => number) =>
    syncedCounter({ registers, name, help, values: () => single(value()) });

  syncedCounter({
    registers,
    name: "maitred_shadow_decisions_total",
    help: "Decisions the tr shadow would have made (never carried out), by kind: seat, hold, reject, preempt, pause, mark, resume, overdue_resume, forced_resume, idle_resume, lend.",
    labelNames: ["kind"],
    values: () => byLabel("kind", DECISION_KINDS, shadow.counts().decisions),
  });

  synced(
    "maitred_shadow_seats_elsewhere_total",
    "Requests the tr shadow would have seated on another backend than the one the router chose.",
    () => shadow.counts().seatsElsewhere,
  );
  synced(
    "maitred_shadow_traffic_changes_total",
    "Shadow decisions that, carried out, would have changed the traffic (a hold, a refusal, a preemption, a seat elsewhere); after the first, the shadow's books drift from what tr would have seen.",
    () => shadow.counts().trafficChanges,
  );
  synced(
    "maitred_shadow_errors_total",
    "Failures caught inside the shadow (the router went on unaffected).",
    () => shadow.counts().errors,
  );
  synced(
    "maitred_shadow_engine_overflow_ticks_total",
    "Scheduler ticks, while the shadow ran, on which some engine reported waiting requests or new preemptions: the overflow tr's pauses exist to prevent.",
    () => shadow.counts().overflowTicks,
  );

  new Gauge({
    name: "maitred_shadow_paused_programs",
    help: "Programs the tr shadow would hold paused now.",
    registers,
    collect() {
      const v = shadow.gauges().pausedPrograms;
      if (v !== null) this.set(v);
    },
  });
  new Gauge({
    name: "maitred_shadow_held_requests",
    help: "Requests the tr shadow would hold now (the router sent them on).",
    registers,
    collect() {
      const v = shadow.gauges().heldRequests;
      if (v !== null) this.set(v);
    },
  });
  const holds = new Histogram({
    name: "maitred_shadow_hold_seconds",
    help: "How long the tr shadow would have held requests, by how the hold ended: seated, rejected, or request_ended (the real request ended first: a lower bound).",
    labelNames: ["end"],
    buckets: WAIT_BUCKETS_S,
    registers,
  });
  for (const end of HOLD_ENDS) holds.zero({ end });
  const pauses = new Histogram({
    name: "maitred_shadow_pause_seconds",
    help: "How long the tr shadow would have kept programs paused (its own pause → resume pairs).",
    buckets: WAIT_BUCKETS_S,
    registers,
  });
  return {
    hold: (o) => holds.observe({ end: o.end }, o.ms / 1000),
    pause: (ms) => pauses.observe(ms / 1000),
  };
}
