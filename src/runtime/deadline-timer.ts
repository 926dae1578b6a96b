/**
 * The deadline tick: a tick with no samples runs only the core's timeouts, resume and pause,
 * so a deadline (a forced resume, an idle lease, a parked request's max wait) that falls
 * between two regular ticks is acted on when it is due, not up to an interval later. One timer
 * serves every source of deadlines the runtime has (the core, and a shadow core beside it):
 * `nextDeadline` gives the earliest of them.
 */
import type { Clock, TimerHandle } from "./clock.ts";

/** Retry delay for a deadline that is already due but still reported (spin guard). */
export const MIN_DEADLINE_RETRY_MS = 1000;

export interface DeadlineTimerOptions {
  clock: Clock;
  /** The earliest time (ms, event clock) at which a tick would act, or null: none is due. */
  nextDeadline(): number | null;
  /** Send the deadline's tick: a `tick` event with no samples at `now`. */
  tick(now: number): void;
  /** Shutdown began: nothing is armed from then on. */
  isStopping(): boolean;
  /** How long to wait before asking again about a deadline its own tick left standing. */
  retryMs?: number;
}

export interface DeadlineTimer {
  /** Arm for the next deadline, replacing the armed one (after every tick). */
  arm(): void;
  /**
   * Arm only if the next deadline now comes before the armed one: a request just parked or
   * held may bring one (its max pause, its max wait) while the others stand.
   */
  armIfEarlier(): void;
  cancel(): void;
}

export function createDeadlineTimer(options: DeadlineTimerOptions): DeadlineTimer {
  const { clock } = options;
  const retryMs = options.retryMs ?? MIN_DEADLINE_RETRY_MS;
  let timer: TimerHandle | null = null;
  let armedAt = Number.POSITIVE_INFINITY;
  /** The deadline the last deadline tick was for. */
  let handledAt = Number.NEGATIVE_INFINITY;

  function cancel(): void {
    timer?.cancel();
    timer = null;
  }

  function arm(): void {
    cancel();
    armedAt = Number.POSITIVE_INFINITY;
    const at = options.nextDeadline();
    if (at === null || options.isStopping()) return;
    armedAt = at;
    // A deadline its own tick left standing is one the core chose not to act on yet (e.g. the
    // idle lease of a busy program): retrying at once would spin. Any other gets its tick when
    // due, at once if it is already (a request parked with a short max wait).
    const delay = at <= handledAt ? retryMs : Math.max(0, at - clock.now());
    timer = clock.setTimeout(() => {
      timer = null;
      handledAt = at;
      options.tick(clock.now());
      arm();
    }, delay);
  }

  return {
    arm,
    armIfEarlier() {
      if ((options.nextDeadline() ?? Number.POSITIVE_INFINITY) < armedAt) arm();
    },
    cancel,
  };
}
