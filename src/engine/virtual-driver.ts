/**
 * Virtual time for engines ("virtual (benchmarks; DES with no real
 * sleeping)"): a small discrete-event kernel plus an adapter that steps an engine whenever it
 * has work and is idle, delivering each step's outputs at `start + duration`.
 *
 * The cluster simulator runs many engines on one kernel, interleaved with its own events
 * (arrivals, tool-time completions, scheduler ticks). Nothing here sleeps or reads a clock:
 * `run(until)` pops events in (time, insertion) order and jumps `now` to each.
 */

import { createEventQueue, type TimedEvent } from "./event-queue.ts";
import type { Engine, EngineRequest, RequestOutput, StepResult } from "./types.ts";

export interface TimerHandle {
  readonly at: number;
  cancel(): void;
}

export interface EventKernel {
  /** Current virtual time (s). */
  readonly now: number;
  /** Live (not cancelled) events still queued. */
  readonly pending: number;
  /** Run `fn` at virtual time `at` (≥ now); same-time events run in scheduling order. */
  schedule(at: number, fn: () => void): TimerHandle;
  /** `schedule(now + delay, fn)`. */
  after(delay: number, fn: () => void): TimerHandle;
  /**
   * Process events with time ≤ `until` (all of them when omitted); afterwards `now` is
   * `until` if it is finite and later than the last event. Returns the events run.
   */
  run(until?: number): number;
}

export function createEventKernel(options: { start?: number } = {}): EventKernel {
  const queue = createEventQueue();
  let now = options.start ?? 0;
  let seq = 0;
  let live = 0;
  let running = false;

  const kernel: EventKernel = {
    get now() {
      return now;
    },
    get pending() {
      return live;
    },
    schedule(at, fn) {
      if (!(at >= now)) throw new RangeError(`cannot schedule at ${at}, before now (${now})`);
      const event: TimedEvent = { at, seq: seq++, fn, cancelled: false };
      queue.push(event);
      live++;
      return {
        at,
        cancel() {
          if (event.cancelled) return;
          event.cancelled = true;
          live--;
        },
      };
    },
    after: (delay, fn) => kernel.schedule(now + delay, fn),
    run(until = Number.POSITIVE_INFINITY) {
      if (running) throw new Error("EventKernel.run is not re-entrant");
      running = true;
      let count = 0;
      try {
        for (let top = queue.peek(); top !== undefined && top.at <= until; top = queue.peek()) {
          queue.pop();
          if (top.cancelled) continue;
          top.cancelled = true;
          live--;
          now = top.at;
          count++;
          top.fn();
        }
      } finally {
        running = false;
      }
      if (Number.isFinite(until) && until > now) now = until;
      return count;
    },
  };
  return kernel;
}

export interface VirtualEngineCallbacks {
  /** One request's output, visible at virtual time `time` (the step's end). */
  onOutput?(output: RequestOutput, time: number): void;
  /** Every completed step, after its outputs were delivered. */
  onStep?(result: StepResult, endTime: number): void;
}

export interface VirtualEngine {
  readonly engine: Engine;
  /** A step is in flight. */
  readonly busy: boolean;
  /** Queue a request arriving now; the engine steps at the current time if it is idle. */
  submit(request: Omit<EngineRequest, "arrivalTime">): void;
  /** Abort now; outputs of a step already in flight are not delivered for it. */
  abort(id: string): boolean;
}

export function attachEngine(
  kernel: EventKernel,
  engine: Engine,
  callbacks: VirtualEngineCallbacks = {},
): VirtualEngine {
  let inFlight = false;
  let kickPending = false;
  const abortedInFlight = new Set<string>();

  const complete = (result: StepResult) => {
    inFlight = false;
    const end = kernel.now;
    const onOutput = callbacks.onOutput;
    if (onOutput !== undefined) {
      for (const output of result.outputs) {
        if (abortedInFlight.size > 0 && abortedInFlight.has(output.id)) continue;
        onOutput(output, end);
      }
    }
    abortedInFlight.clear();
    callbacks.onStep?.(result, end);
    // Step again at once unless a same-time kick is queued (it will gather later arrivals).
    if (!kickPending && engine.hasWork()) runStep();
  };

  const runStep = () => {
    if (inFlight) return;
    const result = engine.step(kernel.now);
    if (result === null) return;
    inFlight = true;
    kernel.schedule(result.startTime + result.duration, () => complete(result));
  };

  const kick = () => {
    if (inFlight || kickPending) return;
    kickPending = true;
    // Deferred to a same-time event so requests arriving together share the first step.
    kernel.schedule(kernel.now, () => {
      kickPending = false;
      runStep();
    });
  };

  return {
    engine,
    get busy() {
      return inFlight;
    },
    submit(request) {
      engine.add({ ...request, arrivalTime: kernel.now });
      kick();
    },
    abort(id) {
      if (inFlight) abortedInFlight.add(id);
      return engine.abort(id, kernel.now);
    },
  };
}
