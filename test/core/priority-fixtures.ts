import type { PriorityClass, PriorityClassSettings, PriorityConfig } from "../../src/core/api.ts";
import { PRIORITY_CLASSES } from "../../src/core/api.ts";
import { createHarness, type HarnessOptions } from "./harness.ts";

/** Priority test fixtures: a config with no reservations and no preemption unless asked. */

type ClassOverrides = Partial<Record<PriorityClass, Partial<PriorityClassSettings>>>;

/** Every class: no reservation, no preemption, roomy queues; then the overrides. */
export function plainClasses(overrides: ClassOverrides = {}): PriorityConfig["classes"] {
  const out: ClassOverrides = {};
  for (const c of PRIORITY_CLASSES) {
    out[c] = { reservedShare: 0, preempt: false, ...overrides[c] };
  }
  return out;
}

export function createPriorityHarness(
  options: HarnessOptions & {
    classes?: ClassOverrides;
    priority?: Omit<PriorityConfig, "classes">;
  },
) {
  const { classes, priority, ...rest } = options;
  return createHarness({
    backends: ["b0"],
    ...rest,
    config: { ...rest.config, priority: { ...priority, classes: plainClasses(classes) } },
  });
}

export type PriorityHarness = ReturnType<typeof createPriorityHarness>;

export function prioritySnap(h: PriorityHarness) {
  const p = h.scheduler.snapshot().priority;
  if (p === undefined) throw new Error("priorities are off in this harness");
  return p;
}
