/**
 * The priority metrics (label `class`), declared on the
 * router's one registry by `createRouterMetrics` and only while priorities are in force, so a
 * router without them exports exactly what it did before. Counters are synced from the core's
 * monotonic per-class counters in `snapshot().priority`; room gauges are per backend and class
 * (both labels bounded: configured backends × four classes; never a program or tenant id).
 */
import { Gauge, Histogram, type Registry } from "prom-client";
import {
  ADMISSION_OUTCOMES,
  PRIORITY_CLASSES,
  type PrioritySnapshot,
  type QueueWaitObservation,
} from "../core/api.ts";
import { type CountSeries, syncedCounter } from "./synced-counter.ts";

export interface PriorityMetricsOptions {
  registers: Registry[];
  /** `snapshot().priority` of the scrape's one snapshot (undefined if the core has none). */
  current(): PrioritySnapshot | undefined;
}

export interface PriorityMetrics {
  /** One queue wait, observed when the event that ended it was handled (never by a scrape). */
  observeQueueWait(observation: QueueWaitObservation): void;
}

/** Queue waits span the class timeouts: 30 s (system, interactive) to 300 s (bulk). */
const QUEUE_WAIT_BUCKETS_S = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

type ClassView = PrioritySnapshot["classes"][keyof PrioritySnapshot["classes"]];
type RoomView = PrioritySnapshot["backends"][number]["classes"][keyof PrioritySnapshot["classes"]];

export function createPriorityMetrics(options: PriorityMetricsOptions): PriorityMetrics {
  const { registers, current } = options;

  // One monotonic core counter per label set, turned into Prometheus increments.
  const synced = (
    name: string,
    help: string,
    labelNames: string[],
    values: (snap: PrioritySnapshot) => CountSeries,
  ) => {
    syncedCounter({
      registers,
      name,
      help,
      labelNames,
      values: () => {
        const snap = current();
        return snap === undefined ? undefined : values(snap);
      },
    });
  };
  const perClass = (pick: (v: ClassView) => number) => (snap: PrioritySnapshot) =>
    PRIORITY_CLASSES.map((c): [Record<string, string>, number] => [
      { class: c },
      pick(snap.classes[c]),
    ]);

  synced(
    "maitred_priority_admissions_total",
    "Program requests by class and admission outcome: admitted, queued, queue_full (429), queue_timeout (408), client_closed (499 while queued), preempted (503).",
    ["class", "outcome"],
    (snap) =>
      PRIORITY_CLASSES.flatMap((c) =>
        ADMISSION_OUTCOMES.map((o): [Record<string, string>, number] => [
          { class: c, outcome: o },
          snap.classes[c].admissions[o],
        ]),
      ),
  );
  synced(
    "maitred_priority_clamps_total",
    "Requests whose class the tenant's maximum lowered, by effective class.",
    ["class"],
    perClass((v) => v.clamps),
  );
  synced(
    "maitred_priority_promotions_total",
    "Programs admitted out of class order by starvation promotion, by class.",
    ["class"],
    perClass((v) => v.promotions),
  );
  synced(
    "maitred_priority_preemptions_total",
    "Programs taken as preemption victims (paused, or requests cancelled with 503), by class.",
    ["class"],
    perClass((v) => v.preemptions),
  );

  new Gauge({
    name: "maitred_priority_queued_requests",
    help: "Requests parked now, by class.",
    labelNames: ["class"],
    registers,
    collect() {
      const snap = current();
      if (snap === undefined) return;
      for (const c of PRIORITY_CLASSES) this.set({ class: c }, snap.classes[c].queued);
    },
  });
  const room = (name: string, help: string, pick: (v: RoomView) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ["backend", "class"],
      registers,
      collect() {
        this.reset();
        const snap = current();
        if (snap === undefined) return;
        for (const b of snap.backends) {
          for (const c of PRIORITY_CLASSES)
            this.set({ backend: b.id, class: c }, pick(b.classes[c]));
        }
      },
    });
  room(
    "maitred_priority_reserved_tokens",
    "KV tokens reserved for the class on the backend (reserved_share × capacity).",
    (v) => v.reservedTokens,
  );
  room(
    "maitred_priority_used_tokens",
    "KV tokens the class's programs use on the backend.",
    (v) => v.usedTokens,
  );
  room(
    "maitred_priority_held_tokens",
    "Reserved room the class leaves unused on the backend, held back from lower classes.",
    (v) => v.heldTokens,
  );

  const waitHist = new Histogram({
    name: "maitred_priority_queue_wait_seconds",
    help: "How long requests waited in their class's queue before dispatch, by class.",
    labelNames: ["class"],
    buckets: QUEUE_WAIT_BUCKETS_S,
    registers,
  });
  return {
    observeQueueWait(o) {
      waitHist.observe({ class: o.priorityClass }, o.ms / 1000);
    },
  };
}
