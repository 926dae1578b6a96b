import type { SchedulerConfig } from "../api.ts";
import type { SchedulerPolicies } from "../records.ts";
import type { SchedulerState } from "../scheduler-state.ts";
import { createClassOrder } from "./class-order.ts";
import { classAwareVictims } from "./class-victims.ts";
import { resolvePriorityConfig } from "./priority-config.ts";
import { priorityRules } from "./priority-rules.ts";
import { createClassBooks, createPriorityState } from "./priority-state.ts";

/**
 * Turn priorities on for a freshly built state, or leave them off. Cases:
 *   1. no `priority` section → off: tr behaves exactly as before;
 *   2. mode `default` (plain proxy, no queue) → off, with a warning;
 *   3. the section does not validate (reservations that do not fit, bad numbers, unknown
 *      names) → off, with every error logged at `error` (a broken priority config never takes
 *      routing down; never throws);
 *   4. otherwise on: class books on every backend, the class order and the class-aware pause
 *      victims, unless the caller supplied its own policies.
 */
export function setupPriorities(
  state: SchedulerState,
  config: SchedulerConfig,
  custom: Partial<SchedulerPolicies> | undefined,
): void {
  if (config.priority === undefined) return; // 1
  if (config.mode !== "tr") {
    state.effects.log("warn", "priority classes need the tr router; running without them", {
      mode: config.mode,
    }); // 2
    return;
  }
  const resolved = resolvePriorityConfig(config.priority, state.config);
  if (!resolved.ok) {
    state.effects.log("error", "invalid priority config; running without priorities", {
      errors: resolved.errors,
    }); // 3
    return;
  }
  const pr = createPriorityState(resolved.config); // 4
  state.priority = pr;
  state.rules = priorityRules(state, pr);
  for (const b of state.backends) b.classBooks = createClassBooks();
  if (custom?.resumeOrder === undefined) {
    state.policies.resumeOrder = createClassOrder({
      queuePolicy: pr.config.queuePolicy,
      priorityPolicy: pr.config.priorityPolicy,
      ageWeightPerMs: pr.config.ageWeightPerMs,
      now: () => state.now,
    });
  }
  if (custom?.pauseVictims === undefined) state.policies.pauseVictims = classAwareVictims;
  state.effects.log("info", "priority classes on", {
    queuePolicy: pr.config.queuePolicy,
    priorityPolicy: pr.config.priorityPolicy,
  });
}
