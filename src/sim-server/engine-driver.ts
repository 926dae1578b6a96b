/**
 * Runs the pure engine in scaled real time (wall-clock mode; the cluster simulator drives the
 * same engine in virtual time): while the engine has work, call `step(now)`, hold the step's
 * outputs for `duration / timeScale` real seconds, deliver them, repeat; sleep when idle.
 *
 * Engine time is `max(scaled real time, end of the last delivered step)`, so it never runs
 * backwards even when timers fire late or sub-millisecond steps run back to back. A step is
 * delivered when real time reaches its end on the engine's clock (an absolute due time), not
 * after its duration counted from whenever its timer was set: at high time scales a step is
 * shorter than the 1 ms a timer can wait and fires at once, and with relative delays those
 * early deliveries added up until engine time ran far ahead of real time. With absolute due
 * times a delivery is early by less than one timer tick, whatever the number of steps.
 */

import type { Engine, EngineRequest, RequestOutput, StepResult } from "../engine/types.ts";
import type { Clock, TimerHandle } from "../runtime/clock.ts";

export interface RequestListener {
  /** One engine output for this request, visible at engine time `time` (s). */
  onOutput(output: RequestOutput, time: number): void;
}

export type DriverEvent =
  | { kind: "step"; result: StepResult; endTime: number }
  | { kind: "aborted"; id: string; time: number }
  | { kind: "idle"; time: number };

export interface EngineDriver {
  readonly engine: Engine;
  /** Current engine time (s). */
  now(): number;
  /** Queue a request; `listener` receives its outputs until it finishes or is aborted. */
  submit(request: Omit<EngineRequest, "arrivalTime">, listener: RequestListener): number;
  /**
   * Drop a request (client gone, injected failure). Its outputs stop at once; the engine
   * abort lands at the next step boundary, i.e. within one engine step.
   */
  abort(id: string): void;
  onEvent(listener: (event: DriverEvent) => void): () => void;
  close(): void;
}

export interface EngineDriverOptions {
  engine: Engine;
  clock: Clock;
  /** S: engine time runs S times faster than real time. */
  timeScale: number;
}

const MS_PER_S = 1000;

export function createEngineDriver(options: EngineDriverOptions): EngineDriver {
  const { engine, clock, timeScale } = options;
  const startMs = clock.now();
  const listeners = new Map<string, RequestListener>();
  const eventListeners = new Set<(event: DriverEvent) => void>();
  const pendingAborts = new Set<string>();
  let floor = 0;
  let inFlight = false;
  let wakeScheduled = false;
  let timer: TimerHandle | null = null;
  let closed = false;

  const now = () => Math.max(floor, ((clock.now() - startMs) * timeScale) / MS_PER_S);
  const emit = (event: DriverEvent) => {
    for (const l of eventListeners) l(event);
  };

  const applyAbort = (id: string, time: number) => {
    engine.abort(id, time);
    emit({ kind: "aborted", id, time });
  };

  const runStep = () => {
    wakeScheduled = false;
    timer = null;
    if (closed || inFlight) return;
    const start = now();
    const result = engine.hasWork() ? engine.step(start) : null;
    if (result === null) {
      emit({ kind: "idle", time: start });
      return;
    }
    inFlight = true;
    const endTime = result.startTime + result.duration;
    const dueMs = startMs + (endTime * MS_PER_S) / timeScale;
    timer = clock.setTimeout(() => deliver(result, endTime), dueMs - clock.now());
  };

  const deliver = (result: StepResult, endTime: number) => {
    timer = null;
    inFlight = false;
    floor = Math.max(floor, endTime);
    for (const output of result.outputs) {
      const listener = listeners.get(output.id);
      if (listener === undefined) continue;
      if (output.finishReason !== undefined) listeners.delete(output.id);
      listener.onOutput(output, endTime);
    }
    for (const id of pendingAborts) applyAbort(id, endTime);
    pendingAborts.clear();
    emit({ kind: "step", result, endTime });
    wake();
  };

  const wake = () => {
    if (closed || inFlight || wakeScheduled) return;
    wakeScheduled = true;
    // Deferred one turn so requests arriving together share the next step.
    timer = clock.setTimeout(runStep, 0);
  };

  return {
    engine,
    now,
    submit(request, listener) {
      const arrivalTime = now();
      listeners.set(request.id, listener);
      engine.add({ ...request, arrivalTime });
      wake();
      return arrivalTime;
    },
    abort(id) {
      if (!listeners.delete(id)) return;
      if (inFlight) pendingAborts.add(id);
      else applyAbort(id, now());
      wake();
    },
    onEvent(listener) {
      eventListeners.add(listener);
      return () => eventListeners.delete(listener);
    },
    close() {
      closed = true;
      timer?.cancel();
      timer = null;
      listeners.clear();
    },
  };
}
