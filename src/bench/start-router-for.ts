import { resolveRouterConfig } from "../config/load-config.ts";
import type { RouterConfig } from "../config/router-config.ts";
import { startRouter } from "../runtime/service.ts";
import type { RouterStarter } from "./compare.ts";

/**
 * The router `bench compare` puts in front of its simulated backends: maitred itself in the
 * requested mode, on a free port, warnings only; every other setting is its default or its
 * MAITRED_* environment twin (so `MAITRED_PLACEMENT=worst-fit maitred bench compare` works).
 * Its clocks run at the run's time scale, like the engines and the tool times.
 */
export const startRouterFor: RouterStarter = async (mode, backends, timeScale) =>
  startRouter(
    scaleRouterTimes(
      resolveRouterConfig({
        flags: { router: mode, backends: backends.join(","), port: "0", "log-level": "warn" },
        env: process.env,
      }),
      timeScale,
    ),
  );

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
