/**
 * `--backends sim:N`: N simulated backends in this process on free loopback ports, with the
 * YAML `sim:` block as their options (read by the block's schema into `startSimBackend`'s). They
 * run on the router's clock, so a test's manual or virtual clock drives their engines too.
 */

import type { PriorityPolarity } from "../core/records.ts";
import { priorityPolarity } from "../engine/queue-order.ts";
import type { Clock } from "../runtime/clock.ts";
import type { RawSimBackendOptions } from "../sim-server/options.ts";
import { type SimBackend, startSimBackend } from "../sim-server/start-sim-backend.ts";
import type { Logger } from "../util/logger.ts";

export interface StartedSims {
  urls: string[];
  /** The backends whose engines schedule by priority, and which values they serve first. */
  priority: Record<string, PriorityPolarity>;
  close(): Promise<void>;
}

export async function startSimBackends(
  count: number,
  personality: "vllm" | "sglang",
  options: RawSimBackendOptions,
  logger: Logger,
  clock: Clock,
): Promise<StartedSims> {
  const started: SimBackend[] = [];
  try {
    for (let i = 0; i < count; i++) {
      started.push(
        await startSimBackend({
          personality,
          ...options,
          // Distinct seeds keep the backends from generating identical streams.
          seed: Number(options.seed ?? 0) + i,
          host: "127.0.0.1",
          port: 0,
          logger: logger.child({ sim: i }),
          clock,
        }),
      );
    }
  } catch (err) {
    await Promise.all(started.map((s) => s.close()));
    throw err;
  }
  const priority: Record<string, PriorityPolarity> = {};
  for (const s of started) {
    const p = s.engine.config.priorityScheduling;
    if (p !== undefined) priority[s.url] = priorityPolarity(p);
  }
  return {
    urls: started.map((s) => s.url),
    priority,
    close: async () => {
      await Promise.all(started.map((s) => s.close()));
    },
  };
}
