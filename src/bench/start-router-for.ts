import { resolveRouterConfig } from "../config/load-config.ts";
import type { RouterConfig } from "../config/router-config.ts";
import type { Clock } from "../runtime/clock.ts";
import { startRouter } from "../service/service.ts";
import { startSimBackend } from "../sim-server/start-sim-backend.ts";
import { type Logger, silentLogger } from "../util/logger.ts";
import type { BackendStarter, RouterStarter } from "./compare.ts";
import { startServeProcess } from "./maitred-process.ts";

/**
 * Divides the router's scheduling periods and timeouts by the time scale. At `--time-scale 20`
 * the engines and tools run 20× faster; a 5 s tick left unscaled would be a 100 s tick in the
 * modelled system, and paused programs would wait far longer than under `maitred serve`
 * (measured: tr at 0.91× default with the tick unscaled, 2.35× with it scaled).
 */
export function scaleRouterTimes(config: RouterConfig, timeScale: number): RouterConfig {
  if (timeScale === 1) return config;
  const scaled = { ...config };
  for (const [key] of SCALED_TIMES) scaled[key] = config[key] / timeScale;
  return scaled;
}

/** The router's periods and timeouts (ms) that run at the bench's time scale, and their flags. */
export const SCALED_TIMES = [
  ["schedulerIntervalMs", "--scheduler-interval"],
  ["metricsIntervalMs", "--metrics-interval"],
  ["maxPauseMs", "--max-pause"],
  ["idleTimeoutMs", "--idle-timeout"],
  ["ageingMs", "--ageing"],
  ["lendMaxHoldMs", "--lend-max-hold"],
] as const;

/**
 * The flags that give `maitred serve` a resolved config's tail preset and its scaled periods
 * and timeouts. The preset goes by name, so the router's startup line names it; its bounds,
 * scaled, follow and override the preset's own.
 */
export function scaledTimeFlags(c: RouterConfig): string[] {
  return [
    "--tail",
    c.tail,
    ...(c.boundsOverridden.tierPacking ? ["--tier-packing", c.tierPacking] : []),
    ...SCALED_TIMES.flatMap(([key, flag]) => [flag, String(c[key] / 1000)]),
  ];
}

/**
 * The router `bench compare` puts in front of its simulated backends: `maitred serve` in the
 * requested mode, as its own process on a free port, as users run it. Every other setting is
 * its default or its MAITRED_* environment twin (so `MAITRED_PLACEMENT=worst-fit maitred bench
 * compare` works), resolved here, and its clocks run at the run's time scale like the engines
 * and the tool times: the scaled values are handed over as flags.
 */
export const startRouterProcess: RouterStarter = (mode, backends, timeScale, kvBytesPerToken) =>
  routerProcessStarter({})(mode, backends, timeScale, kvBytesPerToken);

/**
 * `startRouterProcess` with settings given as MAITRED_* variables on top of the environment's
 * (`{ MAITRED_TAIL: "throughput" }`): a race starts each contestant this way.
 */
export const routerProcessStarter =
  (env: Readonly<Record<string, string>>): RouterStarter =>
  async (mode, backends, timeScale, kvBytesPerToken) => {
    const c = compareRouterConfig(mode, backends, timeScale, kvBytesPerToken, env);
    return startServeProcess(serveArgs(mode, backends, c));
  };

function serveArgs(mode: "default" | "tr", backends: string[], c: RouterConfig): string[] {
  return [
    "--router",
    mode,
    "--backends",
    backends.join(","),
    ...scaledTimeFlags(c),
    ...(c.kvBytesPerToken === null ? [] : ["--kv-bytes-per-token", String(c.kvBytesPerToken)]),
  ];
}

/** The router `bench compare` runs in `mode`: defaults and MAITRED_* twins, times scaled. */
function compareRouterConfig(
  mode: "default" | "tr",
  backends: string[],
  timeScale: number,
  kvBytesPerToken: number | null,
  env: Readonly<Record<string, string>> = {},
): RouterConfig {
  return scaleRouterTimes(
    resolveRouterConfig({
      flags: {
        router: mode,
        backends: backends.join(","),
        host: "127.0.0.1",
        port: "0",
        // The simulated backends' model, so tr can size their host tier.
        ...(kvBytesPerToken === null ? {} : { "kv-bytes-per-token": String(kvBytesPerToken) }),
      },
      env: { ...process.env, ...env },
    }),
    timeScale,
  );
}

/**
 * The same router and simulated backends as `bench compare` starts, but in the driver's own
 * process and on its clock (`runCompare`'s `clock`): one clock for the driver, the routers
 * and the engines, so a test can run a whole comparison on a virtual clock.
 */
export function inProcessStarters(
  clock: Clock,
  logger: Logger = silentLogger,
): { startRouter: RouterStarter; startBackend: BackendStarter } {
  return {
    startRouter: (mode, backends, timeScale, kvBytesPerToken) =>
      startRouter(compareRouterConfig(mode, backends, timeScale, kvBytesPerToken), {
        clock,
        logger,
      }),
    startBackend: (settings) => startSimBackend({ ...settings, clock, logger }),
  };
}
