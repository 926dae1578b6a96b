/**
 * Polls every backend's metrics for one tick: bounded concurrency (p-queue) and a timeout per
 * poll, a failed or slow poll becoming `null` in the tick (core events.ts). Also keeps the
 * latest good sample per backend for `/backends` and Prometheus ("as last seen").
 */
import PQueue from "p-queue";
import type { BackendMetricsSample } from "../core/events.ts";
import type { Logger } from "../util/logger.ts";
import type { BackendMetricsClient } from "./metrics-client.ts";

export interface LatestSample {
  sample: BackendMetricsSample;
  at: number;
}

export interface BackendPoller {
  pollAll(): Promise<Record<string, BackendMetricsSample | null>>;
  latest(backendId: string): LatestSample | undefined;
}

export interface BackendPollerOptions {
  clients: readonly BackendMetricsClient[];
  concurrency: number;
  timeoutMs: number;
  now: () => number;
  logger: Logger;
}

export function createBackendPoller(options: BackendPollerOptions): BackendPoller {
  const queue = new PQueue({ concurrency: options.concurrency });
  const latest = new Map<string, LatestSample>();

  async function pollOne(client: BackendMetricsClient): Promise<BackendMetricsSample | null> {
    try {
      const sample = await client.poll(AbortSignal.timeout(options.timeoutMs));
      latest.set(client.backendId, { sample, at: options.now() });
      return sample;
    } catch (err) {
      options.logger.warn("backend metrics poll failed", { backend: client.backendId, err });
      return null;
    }
  }

  return {
    async pollAll() {
      const results = await Promise.all(
        options.clients.map(
          (c) => queue.add(() => pollOne(c)) as Promise<BackendMetricsSample | null>,
        ),
      );
      const out: Record<string, BackendMetricsSample | null> = {};
      options.clients.forEach((c, i) => {
        out[c.backendId] = results[i] ?? null;
      });
      return out;
    },
    latest: (id) => latest.get(id),
  };
}
