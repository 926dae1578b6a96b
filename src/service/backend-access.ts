/**
 * The router's two ways to its backends: a keep-alive pool per backend for the requests it
 * forwards, and a metrics client per backend, of the backends' kind (with the host KV tier the
 * configuration gives it), all polled by one poller.
 */
import { type BackendPoller, createBackendPoller } from "../backends/backend-poller.ts";
import { type BackendMetricsClient, withHostKvTokens } from "../backends/metrics-client.ts";
import { createSglangMetricsClient } from "../backends/sglang-metrics-client.ts";
import { createUpstreamPools, getText, type UpstreamPools } from "../backends/upstream-pools.ts";
import { createVllmMetricsClient } from "../backends/vllm-metrics-client.ts";
import { valueFor } from "../config/backends-setting.ts";
import type { RouterConfig } from "../config/router-config.ts";
import type { BackendMetricsSample } from "../core/events.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Logger } from "../util/logger.ts";

export interface BackendAccess {
  upstreams: UpstreamPools;
  poller: BackendPoller;
}

export function createBackendAccess(
  config: RouterConfig,
  backends: string[],
  clock: Clock,
  logger: Logger,
  /** A good answer that came after its round ended (the poller's `onLate`). */
  onLate: (backendId: string, sample: BackendMetricsSample) => void,
): BackendAccess {
  const upstreams = createUpstreamPools({
    backends,
    connections: config.upstreamConnections,
    timeoutMs: config.upstreamTimeoutMs,
  });
  const clients: BackendMetricsClient[] = upstreams.all().map((u) => {
    const fetchText = (path: string, signal: AbortSignal) => getText(u, path, signal);
    const client =
      config.backendType === "sglang"
        ? createSglangMetricsClient(u.id, fetchText)
        : createVllmMetricsClient(u.id, fetchText, config.kvBytesPerToken);
    const hostTokens = valueFor(config.hostKvTokens, u.id);
    return hostTokens === null ? client : withHostKvTokens(client, hostTokens);
  });
  const poller = createBackendPoller({
    clients,
    concurrency: config.pollConcurrency,
    timeoutMs: config.pollTimeoutMs,
    clock,
    logger,
    onLate,
  });
  return { upstreams, poller };
}
