import type { RouterConfig } from "../config/router-config.ts";
import type { Scheduler } from "../core/api.ts";
import type { Logger } from "../util/logger.ts";

/**
 * Whether priorities are in force: asked for, and the core accepted the section (a core that
 * does not say, a test fake, is taken at its config). The policy flags only refine priorities.
 */
export function prioritiesInForce(
  config: RouterConfig,
  scheduler: Scheduler,
  logger: Logger,
): boolean {
  const asked = config.priority.enabled;
  if (!asked && (config.queuePolicy !== null || config.priorityPolicy !== null)) {
    logger.warn("--queue-policy and --priority-policy have no effect without priorities", {
      queuePolicy: config.queuePolicy,
      priorityPolicy: config.priorityPolicy,
    });
  }
  const core = (scheduler as { prioritiesEnabled?: boolean }).prioritiesEnabled;
  return asked && core !== false;
}
