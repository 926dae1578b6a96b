/**
 * The one source of time for everything that runs in real time: the router's runtime, the
 * simulated backend's engine driver and the bench's workload driver all read `now()` and wait
 * with `setTimeout()` on a `Clock` they are given. Production gives them the wall clock; tests
 * give them a manual clock whose time moves only when the test says so, or a virtual clock that
 * moves itself whenever the process has nothing left to do but wait for time (below), so a
 * router, its simulated backends and the bench can run together over loopback HTTP in a
 * fraction of the time they model.
 */

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /**
   * Milliseconds, never decreasing: since the epoch for the wall clock, from an arbitrary
   * origin for a manual clock. Only differences carry meaning.
   */
  now(): number;
  /**
   * Run `fn` once after `ms`. Wall timers are unref'd: a pending timer never keeps a process
   * alive on its own (a server, a socket or a run in progress does that).
   */
  setTimeout(fn: () => void, ms: number): TimerHandle;
}

/**
 * Node's timers cannot wait less than 1 ms, so shorter delays (a simulated engine at a high
 * time scale, a deadline already due) run on the next turn of the event loop instead. The
 * engine driver schedules steps by absolute due times, so these early runs do not add up.
 */
const MIN_TIMER_MS = 1;

export const wallClock: Clock = {
  // The monotonic clock, anchored at the epoch: the system clock may be stepped backwards
  // (NTP), and the engine driver and the router's deadlines need time that never runs back.
  now: () => performance.timeOrigin + performance.now(),
  setTimeout(fn, ms) {
    if (ms < MIN_TIMER_MS) {
      // Left ref'd: an unref'd immediate does not stop the event loop from blocking on I/O
      // first, so it could wait for the next packet; it runs on the next turn anyway.
      const immediate = setImmediate(fn);
      return { cancel: () => clearImmediate(immediate) };
    }
    const timer = setTimeout(fn, ms);
    timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
};

export interface ManualClock extends Clock {
  /** Move time forward, firing due timers in time order (each sees `now()` = its due time). */
  advance(ms: number): void;
  /** Fire the timers due now, zero-delay ones included (`advance(0)`). */
  flush(): void;
  /** Timers not yet fired or cancelled. */
  pendingTimers(): number;
  /** Due time of the earliest pending timer; null when none is pending. */
  nextDue(): number | null;
  /**
   * How many times the clock has been read, set or cancelled so far. Whatever a process
   * does in response to I/O (a request arriving, a response ending) reads or sets the time,
   * so a count that stops moving means the process has settled (createVirtualClock).
   */
  uses(): number;
}

interface Timer {
  due: number;
  fn: () => void;
}

/** A manual clock; `onSet` hears of every timer set (the virtual clock wakes up on it). */
function manualClock(start: number, onSet: () => void): ManualClock {
  let now = start;
  let seq = 0;
  let uses = 0;
  const timers = new Map<number, Timer>();
  /** The earliest timer (the first set among equals), or undefined. */
  const earliest = (): [number, Timer] | undefined => {
    let next: [number, Timer] | undefined;
    for (const entry of timers) if (next === undefined || entry[1].due < next[1].due) next = entry;
    return next;
  };
  const advance = (ms: number) => {
    const target = now + Math.max(0, ms);
    for (;;) {
      const next = earliest();
      if (next === undefined || next[1].due > target) break;
      timers.delete(next[0]);
      now = Math.max(now, next[1].due);
      next[1].fn();
    }
    now = target;
  };
  return {
    now: () => {
      uses++;
      return now;
    },
    setTimeout(fn, ms) {
      uses++;
      const id = seq++;
      timers.set(id, { due: now + Math.max(0, ms), fn });
      onSet();
      return {
        cancel: () => {
          uses++;
          timers.delete(id);
        },
      };
    },
    advance,
    flush: () => advance(0),
    pendingTimers: () => timers.size,
    nextDue: () => earliest()?.[1].due ?? null,
    uses: () => uses,
  };
}

export function createManualClock(start = 0): ManualClock {
  return manualClock(start, () => {});
}

export interface VirtualClock extends ManualClock {
  /** Stop moving by itself (pending timers stay pending; `advance()` still works). */
  stop(): void;
}

/**
 * Event-loop turns without a clock use before the virtual clock moves. A message between two
 * loopback sockets of one process is readable at the next turn's poll, and every hop of a
 * request through the bench, the router and a simulated backend reads or sets the time within
 * a hop or two; twenty quiet turns leave a wide margin at a few microseconds a turn.
 */
export const DEFAULT_QUIET_TURNS = 20;

/**
 * A manual clock that moves itself: whenever a timer is pending and the process has gone
 * `quietTurns` turns of the event loop without touching the clock, time jumps to the earliest
 * due timer and fires it (with any others due at that instant). Between jumps, I/O runs as
 * usual: bytes written to a loopback socket are read on the next turn, and whatever the
 * reader does with them (park a request, hand it to an engine, record a step) uses the clock
 * and so restarts the count. Time therefore only moves once everything that can happen now
 * has happened, and a run costs as many jumps as it has timer instants, however long it
 * models. With nothing pending the clock sleeps (no turns are spent) until a timer is set.
 *
 * The turns are spent with setImmediate, which keeps the process alive while timers are
 * pending: call `stop()` when done.
 */
export function createVirtualClock(start = 0, quietTurns = DEFAULT_QUIET_TURNS): VirtualClock {
  let spinning = false;
  let stopped = false;
  let seen = -1;
  let quiet = 0;
  const clock = manualClock(start, () => {
    if (!spinning && !stopped) {
      spinning = true;
      seen = -1;
      setImmediate(turn);
    }
  });
  function turn(): void {
    if (stopped || clock.pendingTimers() === 0) {
      spinning = false;
      return;
    }
    const uses = clock.uses();
    if (uses !== seen) {
      seen = uses;
      quiet = 0;
    } else if (++quiet >= quietTurns) {
      quiet = 0;
      const due = clock.nextDue();
      if (due !== null) clock.advance(due - clock.now());
      // What the fired timers set off must settle before the next jump: count afresh.
      seen = clock.uses();
    }
    setImmediate(turn);
  }
  return {
    ...clock,
    stop() {
      stopped = true;
    },
  };
}
