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

/** A sample's `hostKvTier` only when the engine says (an absent field is "does not say"). */
export const tierField = (tier: boolean | undefined): { hostKvTier?: boolean } =>
  tier === undefined ? {} : { hostKvTier: tier };
