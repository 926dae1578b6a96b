import type { BackendMetricsSample } from "../core/events.ts";

/** Fetch a path from the backend; rejects on transport errors, resolves non-2xx statuses. */
export type FetchText = (
  path: string,
  signal: AbortSignal,
) => Promise<{ status: number; text: string }>;

/** Reads one backend's engine truth. */
export interface BackendMetricsClient {
  readonly backendId: string;
  /** One poll; rejects when the backend cannot be read (the tick then carries null). */
  poll(signal: AbortSignal): Promise<BackendMetricsSample>;
}

export class PollError extends Error {
  constructor(backendId: string, message: string) {
    super(`${backendId}: ${message}`);
    this.name = "PollError";
  }
}

export async function fetchOk(
  fetchText: FetchText,
  backendId: string,
  path: string,
  signal: AbortSignal,
): Promise<string> {
  const { status, text } = await fetchText(path, signal);
  if (status < 200 || status >= 300)
    throw new PollError(backendId, `GET ${path} answered ${status}`);
  return text;
}

/**
 * A sample's `hostKvTier` and `hostKvTokens` only when the engine says (an absent field is
 * "does not say"); a tier's size only when there is one.
 */
export function tierField(
  tier: boolean | undefined,
  tokens?: number | null,
): { hostKvTier?: boolean; hostKvTokens?: number } {
  if (tier === undefined) return {};
  const sized = tier && tokens != null && tokens > 0;
  return sized ? { hostKvTier: true, hostKvTokens: tokens } : { hostKvTier: tier };
}

/**
 * The operator's size of a backend's host KV tier (`--host-kv-tokens`), for engines that do not
 * give it in tokens. An engine that says it has no tier is believed: the engine is the truth.
 */
export function withHostKvTokens(
  client: BackendMetricsClient,
  tokens: number,
): BackendMetricsClient {
  return {
    backendId: client.backendId,
    async poll(signal) {
      const sample = await client.poll(signal);
      if (sample.hostKvTier === false || sample.hostKvTokens !== undefined) return sample;
      return { ...sample, hostKvTier: true, hostKvTokens: tokens };
    },
  };
}
