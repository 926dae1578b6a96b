import { resolveRouterConfig } from "../config/load-config.ts";
import type { RouterConfig } from "../config/router-config.ts";
import type { RouterStarter } from "./compare.ts";
import { startMaitredProcess } from "./maitred-process.ts";

/**
 * Divides the router's scheduling periods and timeouts by the time scale. At `--time-scale 20`
 * the engines and tools run 20× faster; a 5 s tick left unscaled would be a 100 s tick in the
 * modelled system, and paused programs would wait far longer than under `maitred serve`
 * (measured: tr at 0.91× default with the tick unscaled, 2.35× with it scaled).
 */
export function scaleRouterTimes(config: RouterConfig, timeScale: number): RouterConfig {
  if (timeScale === 1) return config;
  const scale = (ms: number) => ms / timeScale;
  return {
    ...config,
    schedulerIntervalMs: scale(config.schedulerIntervalMs),
    metricsIntervalMs: scale(config.metricsIntervalMs),
    maxPauseMs: scale(config.maxPauseMs),
    idleTimeoutMs: scale(config.idleTimeoutMs),
    ageingMs: scale(config.ageingMs),
    lendMaxHoldMs: scale(config.lendMaxHoldMs),
  };
}

/**
 * The router `bench compare` puts in front of its simulated backends: `maitred serve` in the
 * requested mode, as its own process on a free port, as users run it. Every other setting is
 * its default or its MAITRED_* environment twin (so `MAITRED_PLACEMENT=worst-fit maitred bench
 * compare` works), resolved here, and its clocks run at the run's time scale like the engines
 * and the tool times: the scaled values are handed over as flags.
 */
export const startRouterProcess: RouterStarter = async (mode, backends, timeScale) => {
  const c = scaleRouterTimes(
    resolveRouterConfig({
      flags: { router: mode, backends: backends.join(","), port: "0" },
      env: process.env,
    }),
    timeScale,
  );
  const seconds = (ms: number) => String(ms / 1000);
  return startMaitredProcess(
    [
      "serve",
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--router",
      mode,
      "--backends",
      backends.join(","),
      // The listening line is logged at info; the driver reads it, then drains the rest.
      "--log-level",
      "info",
      "--scheduler-interval",
      seconds(c.schedulerIntervalMs),
      "--metrics-interval",
      seconds(c.metricsIntervalMs),
      "--max-pause",
      seconds(c.maxPauseMs),
      "--idle-timeout",
      seconds(c.idleTimeoutMs),
      "--ageing",
      seconds(c.ageingMs),
      "--lend-max-hold",
      seconds(c.lendMaxHoldMs),
    ],
    "maitred listening",
  );
};
