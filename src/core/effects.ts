import type { MaitredError } from "../errors.ts";

/**
 * The core's whole window onto the world (the scheduler's syscall table). The core
 * calls these synchronously while handling an event; implementations must not call back into
 * the core re-entrantly (queue the work, or complete it asynchronously and send a new event).
 */
export interface Effects {
  /**
   * Hand a request (arrived or parked) to a backend. `pausedMs` is how long it was held
   * (0 when it was never parked); it becomes the `x-maitred-paused-ms` header. `priority` is the
   * request's place in the engine's order, in the backend's polarity, for a backend declared to
   * schedule by priority (engine-order.ts); null = send none.
   */
  dispatch(requestId: string, backendId: string, pausedMs: number, priority: number | null): void;
  /** Answer a parked or arriving request with an error instead of forwarding it. */
  reject(requestId: string, error: MaitredError): void;
  /** Abort an in-flight request (backend went unhealthy, preemption, shutdown). */
  cancel(requestId: string, error: MaitredError): void;
  /** Structured log of a decision (pause, resume, mark, force resume, health change...). */
  log(
    level: "debug" | "info" | "warn" | "error",
    msg: string,
    fields?: Record<string, unknown>,
  ): void;
}
