/**
 * The scheduler's tick rounds: each interval the backends' `/metrics` are polled and what came
 * back goes to the core as one `tick` event. A round waits for the answers only so long: a
 * slow backend's figures reach the core on their own when they come (a late sample, a tick of
 * its own), and the others' are not held back. The first round waits for every backend up to
 * the poll timeout, for their capacities. With `--metrics`, a second ticker polls between the
 * scheduler's ticks for fresher engine figures on /backends and /metrics, and tells the core
 * nothing.
 */
import type { BackendMetricsSample, SchedulerEvent } from "../core/events.ts";
import type { Logger } from "../util/logger.ts";
import type { Clock } from "./clock.ts";
import { createTicker, type MetricsSamples, type Ticker } from "./ticker.ts";

/**
 * How long a tick waits for the backends' metrics, as a share of the scheduler interval (and
 * never past the poll timeout): a `/metrics` answers in milliseconds, so a backend still silent
 * then is slow, and waiting longer would only age the others' figures.
 */
export const ROUND_WAIT_SHARE = 0.25;

export interface TickRoundsOptions {
  clock: Clock;
  logger: Logger;
  /** `--scheduler-interval`, ms. */
  intervalMs: number;
  /** `--poll-timeout`, ms: the first round's wait, and the bound on every later one. */
  pollTimeoutMs: number;
  /**
   * `--metrics-interval`, ms, with `--metrics`: the engine figures' own ticker; null (the
   * default) runs none.
   */
  engineIntervalMs?: number | null;
  /**
   * Poll every backend that has no poll out, waiting up to `waitMs`; a `counted` round's
   * failures count against the backends' health (src/backends/backend-poller.ts).
   */
  pollRound(waitMs: number, counted: boolean): Promise<MetricsSamples>;
  /** The run loop's `send`: the only way into the core. */
  send(event: SchedulerEvent): void;
  /** Shutdown began: a round that ends now, or a late sample, comes too late for the core. */
  isStopping(): boolean;
  /** A tick reached the core (the deadline timer re-arms on it). */
  onTicked(): void;
  /** A scheduler round's polls took `pollMs` (the tick-duration histogram). */
  onRound?(pollMs: number): void;
  /** A round or a late sample's tick threw (logged already); the next one runs as usual. */
  onError?(err: unknown): void;
}

export interface TickRounds {
  /** The scheduler's ticker. */
  readonly ticker: Ticker;
  /** The engine figures' ticker (`--metrics`), or null. */
  readonly engineTicker: Ticker | null;
  /** A backend's good answer that came after its round ended (the poller's `onLate`). */
  deliverLate(backendId: string, sample: BackendMetricsSample): void;
  /** Both tickers stopped; resolves when the polls under way have ended. */
  stop(): Promise<void>;
}

export function createTickRounds(options: TickRoundsOptions): TickRounds {
  const { clock, logger, intervalMs, pollTimeoutMs } = options;
  let roundWaitMs = pollTimeoutMs;
  const ticker = createTicker({
    clock,
    intervalMs,
    poll: () => {
      const round = options.pollRound(roundWaitMs, true);
      roundWaitMs = Math.min(pollTimeoutMs, intervalMs * ROUND_WAIT_SHARE);
      return round;
    },
    onTick(samples, pollMs) {
      if (options.isStopping()) return; // the round shutdown ended early: its figures come too late
      options.send({ kind: "tick", now: clock.now(), metrics: samples });
      options.onRound?.(pollMs);
      options.onTicked();
    },
    onError: (err) => options.onError?.(err),
    logger,
  });
  const engineIntervalMs = options.engineIntervalMs ?? null;
  const engineTicker =
    engineIntervalMs === null
      ? null
      : createTicker({
          clock,
          intervalMs: engineIntervalMs,
          poll: () => options.pollRound(pollTimeoutMs, false),
          onTick() {},
          logger,
        });

  return {
    ticker,
    engineTicker,
    deliverLate(backendId, sample) {
      if (options.isStopping()) return;
      try {
        options.send({ kind: "tick", now: clock.now(), metrics: { [backendId]: sample } });
        options.onTicked();
      } catch (err) {
        // Off the ticker's path, so caught here as the ticker catches its own: never a crash.
        logger.error("scheduler tick failed", { err });
        options.onError?.(err);
      }
    },
    async stop() {
      await Promise.all([ticker.stop(), engineTicker?.stop()]);
    },
  };
}
