/**
 * Time for the runtime. Production uses the wall clock; tests use a manual clock whose time
 * moves only when the test says so.
 */

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds (epoch for the wall clock; arbitrary origin for a manual clock). */
  now(): number;
  /** Run `fn` once after `ms`. Wall timers are unref'd: a pending tick never keeps a process alive. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
}

export const wallClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};

export interface ManualClock extends Clock {
  /** Move time forward, firing due timers in time order (each sees `now()` = its due time). */
  advance(ms: number): void;
  /** Timers not yet fired or cancelled. */
  pendingTimers(): number;
}

export function createManualClock(start = 0): ManualClock {
  let now = start;
  let seq = 0;
  const timers = new Map<number, { due: number; fn: () => void }>();
  return {
    now: () => now,
    setTimeout(fn, ms) {
      const id = seq++;
      timers.set(id, { due: now + Math.max(0, ms), fn });
      return { cancel: () => timers.delete(id) };
    },
    advance(ms) {
      const target = now + ms;
      for (;;) {
        let nextId = -1;
        let nextDue = Number.POSITIVE_INFINITY;
        for (const [id, t] of timers) {
          if (t.due <= target && t.due < nextDue) {
            nextDue = t.due;
            nextId = id;
          }
        }
        if (nextId < 0) break;
        const timer = timers.get(nextId)!;
        timers.delete(nextId);
        now = timer.due;
        timer.fn();
      }
      now = target;
    },
    pendingTimers: () => timers.size,
  };
}
