/** The driver's window onto time, so tests can run the real-time driver on a manual clock. */

export interface DriverClock {
  /** Monotonic milliseconds. */
  now(): number;
  /** Run `fn` after `delayMs`; returns a cancel function. */
  setTimer(delayMs: number, fn: () => void): () => void;
}

/**
 * Node's timers cannot wait less than 1 ms, so shorter delays (high --time-scale) run on the
 * next turn of the event loop instead; the driver schedules steps by absolute due times, so
 * these early runs do not add up.
 */
const MIN_TIMER_MS = 1;

export const systemClock: DriverClock = {
  now: () => performance.now(),
  setTimer(delayMs, fn) {
    if (delayMs < MIN_TIMER_MS) {
      const handle = setImmediate(fn);
      return () => clearImmediate(handle);
    }
    const handle = setTimeout(fn, delayMs);
    return () => clearTimeout(handle);
  },
};

export interface ManualClock extends DriverClock {
  /** Move time forward, running every timer that falls due (in due order). */
  advance(ms: number): void;
  /** Run timers due now (zero-delay timers included). */
  flush(): void;
  pendingTimers(): number;
}

export function createManualClock(startMs = 0): ManualClock {
  let now = startMs;
  let seq = 0;
  const timers = new Map<number, { due: number; fn: () => void }>();
  const runDue = () => {
    for (;;) {
      let next: [number, { due: number; fn: () => void }] | undefined;
      for (const entry of timers) {
        if (entry[1].due <= now && (next === undefined || entry[1].due < next[1].due)) next = entry;
      }
      if (next === undefined) return;
      timers.delete(next[0]);
      next[1].fn();
    }
  };
  return {
    now: () => now,
    setTimer(delayMs, fn) {
      const id = seq++;
      timers.set(id, { due: now + Math.max(0, delayMs), fn });
      return () => timers.delete(id);
    },
    advance(ms) {
      const target = now + ms;
      for (;;) {
        let due = Number.POSITIVE_INFINITY;
        for (const t of timers.values()) due = Math.min(due, t.due);
        if (due > target) break;
        now = Math.max(now, due);
        runDue();
      }
      now = target;
    },
    flush: runDue,
    pendingTimers: () => timers.size,
  };
}
