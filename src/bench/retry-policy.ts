/**
 * When and how long the workload driver (the live bench and the simulator alike) waits before
 * sending a failed step again: what the official OpenAI clients do, so a run sees the retries
 * a real harness would send.
 *   - Retried: no answer at all (connection error, timeout), 408, 409, 429 and every 5xx.
 *   - Wait: the server's Retry-After when it asks for more than 0 and less than 60 s, else
 *     min(0.5 s × 2^retry, 8 s), less up to a quarter of it at random (jitter).
 *   - At most DEFAULT_MAX_RETRIES retries per step (the clients' default), then it fails.
 */

export const DEFAULT_MAX_RETRIES = 2;
/** Pause before a failed program's slot starts the next one, so a dead URL does not spin. */
export const FAILURE_BACKOFF_MS = 250;

const INITIAL_RETRY_S = 0.5;
const MAX_RETRY_S = 8;
const MAX_RETRY_AFTER_MS = 60_000;
const MS_PER_S = 1000;

/** A `Retry-After` header in seconds, as ms; null when absent or not a number of seconds. */
export function parseRetryAfter(value: string | undefined): number | null {
  if (value === undefined) return null;
  const s = Number(value);
  return Number.isFinite(s) && s >= 0 ? s * MS_PER_S : null;
}

/** Whether a step answered with `status` (null = no answer) is sent again. */
export function isRetryable(status: number | null): boolean {
  return status === null || status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * The wait before retry number `retry` (0 = the first retry), in ms. `retryAfterMs` is the
 * server's Retry-After (null when absent); `random` is in [0, 1) and sets the jitter.
 */
export function retryDelayMs(retry: number, retryAfterMs: number | null, random: number): number {
  if (retryAfterMs !== null && retryAfterMs > 0 && retryAfterMs < MAX_RETRY_AFTER_MS) {
    return retryAfterMs;
  }
  const seconds = Math.min(INITIAL_RETRY_S * 2 ** retry, MAX_RETRY_S);
  return seconds * (1 - random * 0.25) * MS_PER_S;
}
