import { resolveRouterConfig } from "../../../src/config/load-config.ts";
import type { RouterConfig } from "../../../src/config/router-config.ts";
import type { SchedulerEvent } from "../../../src/core/events.ts";
import {
  createManualClock,
  createVirtualClock,
  type ManualClock,
} from "../../../src/runtime/clock.ts";
import {
  type RouterHandle,
  type StartRouterOptions,
  startRouter,
} from "../../../src/service/service.ts";
import { silentLogger } from "../../../src/util/logger.ts";

export interface TestRouter extends RouterHandle {
  clock: ManualClock;
  config: RouterConfig;
  /** Resolves with the first event (past or future) matching `pred`. */
  waitForEvent(pred: (e: SchedulerEvent) => boolean): Promise<SchedulerEvent>;
  /** Resolves once `check()` holds, evaluated now and after every event. */
  waitUntil(check: () => boolean): Promise<void>;
  /** Resolves with the next future event matching `pred`. */
  nextEvent(pred: (e: SchedulerEvent) => boolean): Promise<SchedulerEvent>;
  events: SchedulerEvent[];
}

export interface TestRouterOptions extends StartRouterOptions {
  yaml?: string;
  /**
   * Run on a virtual clock (src/runtime/clock.ts) instead of a manual one: time jumps to the
   * next timer whenever the process has settled, so the router's ticks and its `sim:N`
   * backends' engines run by themselves, in no real time. Stopped when the router closes.
   */
  virtualTime?: boolean;
}

/**
 * A router on a free loopback port with a manual clock: its ticker (and the engines of its
 * `sim:N` backends) only move when the test advances the clock or calls `ticker.runOnce()`,
 * so nothing depends on elapsed time.
 */
export async function startTestRouter(
  flags: Record<string, unknown>,
  options: TestRouterOptions = {},
): Promise<TestRouter> {
  const config = resolveRouterConfig({
    flags: { host: "127.0.0.1", port: "0", ...flags },
    configFile: options.yaml === undefined ? undefined : "test.yaml",
    readFile: () => options.yaml ?? "",
  });
  const virtual = options.virtualTime === true ? createVirtualClock(1_000_000) : null;
  const clock = virtual ?? createManualClock(1_000_000);
  const events: SchedulerEvent[] = [];
  const waiters: Array<{
    pred: (e: SchedulerEvent) => boolean;
    resolve: (e: SchedulerEvent) => void;
  }> = [];
  const handle = await startRouter(config, {
    logger: silentLogger,
    clock,
    ...options,
    hooks: {
      ...options.hooks,
      onEvent(e) {
        events.push(e);
        for (let i = waiters.length - 1; i >= 0; i--) {
          if (waiters[i].pred(e)) {
            waiters[i].resolve(e);
            waiters.splice(i, 1);
          }
        }
        options.hooks?.onEvent?.(e);
      },
    },
  });
  await handle.ticker.runOnce(); // the start-up tick: capacity known before the first request
  return {
    ...handle,
    async close() {
      await handle.close();
      virtual?.stop();
    },
    clock,
    config,
    events,
    waitForEvent(pred) {
      const past = events.find(pred);
      if (past) return Promise.resolve(past);
      return new Promise((resolve) => waiters.push({ pred, resolve }));
    },
    waitUntil(check) {
      if (check()) return Promise.resolve();
      return new Promise((resolve) =>
        waiters.push({ pred: () => check(), resolve: () => resolve() }),
      );
    },
    nextEvent(pred) {
      return new Promise((resolve) => waiters.push({ pred, resolve }));
    },
  };
}
