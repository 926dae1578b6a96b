/**
 * The periodic scheduler tick (ThunderAgent `_scheduled_check`):
 * every interval, poll the backends (the poll bounds its own wait, concurrency and time), then
 * hand the samples to `onTick`, which sends one `tick` event. Ticks start one interval apart,
 * counted from the start of the previous one, and never overlap: a poll that outlasts the
 * interval delays the next tick until it ends.
 */
import type { BackendMetricsSample } from "../core/events.ts";
import type { Logger } from "../util/logger.ts";
import type { Clock, TimerHandle } from "./clock.ts";

export type MetricsSamples = Record<string, BackendMetricsSample | null>;

export interface TickerOptions {
  clock: Clock;
  intervalMs: number;
  poll(): Promise<MetricsSamples>;
  /** Called with the samples and how long polling took (ms, on the clock). */
  onTick(samples: MetricsSamples, pollMs: number): void;
  /** A poll or an `onTick` threw (logged already); the ticker goes on with the next interval. */
  onError?(err: unknown): void;
  logger: Logger;
}

export interface Ticker {
  /**
   * Tick now (not waiting for the interval), then every interval. Resolves when the first
   * tick was sent and the next one is armed.
   */
  start(): Promise<void>;
  /** Stops ticking; resolves when a poll already under way has ended (so pools can close). */
  stop(): Promise<void>;
  /** One poll + tick; resolves when the tick was sent. Ticks already running are joined. */
  runOnce(): Promise<void>;
}

export function createTicker(options: TickerOptions): Ticker {
  const { clock, intervalMs, logger } = options;
  let timer: TimerHandle | null = null;
  let running: Promise<void> | null = null;
  let stopped = true;

  /** When the latest tick started. */
  let startedAt = Number.NEGATIVE_INFINITY;

  async function tick(): Promise<void> {
    const started = clock.now();
    startedAt = started;
    let samples: MetricsSamples;
    try {
      samples = await options.poll();
    } catch (err) {
      // The poller maps per-backend failures to null; a throw here is a bug, not a tick.
      logger.error("metrics poll failed", { err });
      options.onError?.(err);
      return;
    }
    try {
      options.onTick(samples, clock.now() - started);
    } catch (err) {
      // A tick that throws must not stop the ticker: the next interval is still armed.
      logger.error("scheduler tick failed", { err });
      options.onError?.(err);
    }
  }

  function runOnce(): Promise<void> {
    running ??= tick().finally(() => {
      running = null;
    });
    return running;
  }

  function schedule(): void {
    if (stopped) return;
    timer = clock.setTimeout(
      () => {
        timer = null;
        void runOnce().then(schedule);
      },
      Math.max(0, startedAt + intervalMs - clock.now()),
    );
  }

  return {
    start() {
      if (!stopped) return Promise.resolve();
      stopped = false;
      return runOnce().then(schedule);
    },
    stop() {
      stopped = true;
      timer?.cancel();
      timer = null;
      return running ?? Promise.resolve();
    },
    runOnce,
  };
}
