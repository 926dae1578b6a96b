/**
 * The one writer ("one run loop, no locks"): the only caller of the scheduler core.
 * Events are handled one at a time, synchronously, in arrival order. Effects the core asks for
 * are queued while it runs and applied after it returns, so nothing the effects trigger (an
 * abort listener, a rejected promise) can call back into the core mid-event; such follow-up
 * events join the queue instead.
 */
import type { Scheduler } from "../core/api.ts";
import type { Effects } from "../core/effects.ts";
import type { SchedulerEvent } from "../core/events.ts";
import { Errors, type MaitredError } from "../errors.ts";
import type { Logger } from "../util/logger.ts";
import { createRequestTable, type Grant, type RequestTable } from "./request-table.ts";

export interface RunLoopHooks {
  /**
   * A request was handed to a backend (metrics: pause-duration histogram; the simulator
   * submits it to its engine here).
   */
  onDispatch?(requestId: string, grant: Grant): void;
  /** A waiting request was refused (the simulator answers its program here). */
  onReject?(requestId: string, error: MaitredError): void;
  /** An event was handled (tests wait on this instead of sleeping). */
  onEvent?(event: SchedulerEvent): void;
  /** The core logged a decision (pause, resume, health change…): the live page lists them. */
  onLog?(
    level: "debug" | "info" | "warn" | "error",
    msg: string,
    fields?: Record<string, unknown>,
  ): void;
}

/** Hooks that call each of `all` in turn (the runtime's own and a caller's). */
export function combineHooks(...all: (RunLoopHooks | undefined)[]): RunLoopHooks {
  const hooks = all.filter((h): h is RunLoopHooks => h !== undefined);
  return {
    onDispatch: (id, grant) => {
      for (const h of hooks) h.onDispatch?.(id, grant);
    },
    onReject: (id, error) => {
      for (const h of hooks) h.onReject?.(id, error);
    },
    onEvent: (event) => {
      for (const h of hooks) h.onEvent?.(event);
    },
    onLog: (level, msg, fields) => {
      for (const h of hooks) h.onLog?.(level, msg, fields);
    },
  };
}

export interface RunLoopOptions {
  createScheduler(effects: Effects): Scheduler;
  logger: Logger;
  hooks?: RunLoopHooks;
  /** The core threw on an event (logged already; the loop goes on): counted in /metrics. */
  onSchedulerError?(event: SchedulerEvent, err: unknown): void;
}

export interface RunLoop {
  /** Queue an event; handled before `send` returns unless the loop is already draining. */
  send(event: SchedulerEvent): void;
  /**
   * The atomic first-byte commit (core `tryCommitFirstByte`): call synchronously right before
   * a request's first byte is written to its client; false = write nothing, the request was
   * cancelled (preempted) and its `cancel` effect answers it. True when the core has no such
   * commit (a test fake): nothing can preempt there.
   */
  tryCommitFirstByte(requestId: string): boolean;
  /** Read-only use outside the loop (snapshots for admin routes and metrics). */
  readonly scheduler: Scheduler;
  readonly requests: RequestTable;
  /**
   * Hooks called after the loop's own, for every event from now on: an observer attached to a
   * loop someone else built (a shadow core watching the simulator's loop).
   */
  addHooks(more: RunLoopHooks): void;
}

type Action =
  | { op: "dispatch"; id: string; backendId: string; pausedMs: number; priority: number | null }
  | { op: "reject"; id: string; error: MaitredError }
  | { op: "cancel"; id: string; error: MaitredError };

export function createRunLoop(options: RunLoopOptions): RunLoop {
  const { logger } = options;
  let hooks: RunLoopHooks = options.hooks ?? {};
  const requests = createRequestTable();
  const actions: Action[] = [];
  const events: SchedulerEvent[] = [];
  let draining = false;

  const effects: Effects = {
    dispatch: (id, backendId, pausedMs, priority) =>
      actions.push({ op: "dispatch", id, backendId, pausedMs, priority }),
    reject: (id, error) => actions.push({ op: "reject", id, error }),
    cancel: (id, error) => actions.push({ op: "cancel", id, error }),
    log: (level, msg, fields) => {
      logger[level](msg, fields);
      hooks.onLog?.(level, msg, fields);
    },
  };
  const scheduler = options.createScheduler(effects);

  function apply(a: Action): void {
    switch (a.op) {
      case "dispatch": {
        const grant = { backendId: a.backendId, pausedMs: a.pausedMs, priority: a.priority };
        if (requests.dispatch(a.id, grant)) hooks.onDispatch?.(a.id, grant);
        else logger.debug("dispatch for a request no longer waiting", { requestId: a.id });
        return;
      }
      case "reject":
        if (requests.reject(a.id, a.error)) hooks.onReject?.(a.id, a.error);
        return;
      case "cancel": {
        // Cancelling a request that is still waiting refuses it.
        const waiting = requests.get(a.id)?.status === "waiting";
        if (requests.cancel(a.id, a.error) && waiting) hooks.onReject?.(a.id, a.error);
        return;
      }
      default: {
        const never: never = a;
        throw new Error(`unknown action ${JSON.stringify(never)}`);
      }
    }
  }

  function handleOne(event: SchedulerEvent): void {
    try {
      scheduler.handle(event);
    } catch (err) {
      // A core bug must not take the router down; an arriving request still gets an answer.
      logger.error("scheduler failed to handle event", { kind: event.kind, err });
      options.onSchedulerError?.(event, err);
      if (event.kind === "request_arrived") {
        actions.push({
          op: "reject",
          id: event.requestId,
          error: Errors.internal("Scheduler error", err),
        });
      }
    }
    // Apply in order; an action may enqueue events (abort listeners), handled after this one.
    for (let i = 0; i < actions.length; i++) {
      try {
        apply(actions[i]);
      } catch (err) {
        logger.error("applying a scheduler effect failed", { op: actions[i].op, err });
      }
    }
    actions.length = 0;
    hooks.onEvent?.(event);
  }

  const loop: RunLoop = {
    send(event) {
      events.push(event);
      if (draining) return;
      draining = true;
      try {
        for (let i = 0; i < events.length; i++) handleOne(events[i]);
      } finally {
        events.length = 0;
        draining = false;
      }
    },
    tryCommitFirstByte(requestId) {
      // Never mid-event: the core runs to completion inside `send` and effects are applied
      // after it returns, so this compare-and-set cannot interleave with a preemption.
      return scheduler.tryCommitFirstByte?.(requestId) ?? true;
    },
    scheduler,
    requests,
    addHooks(more) {
      hooks = combineHooks(hooks, more);
    },
  };
  return loop;
}
