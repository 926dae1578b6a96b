import { resolveRouterConfig } from "../config/load-config.ts";
import { startRouter } from "../runtime/service.ts";
import type { RouterStarter } from "./compare.ts";

/**
 * The router `bench compare` puts in front of its simulated backends: maitred itself in the
 * requested mode, on a free port, every other setting at its default, warnings only.
 */
export const startRouterFor: RouterStarter = async (mode, backends) =>
  startRouter(
    resolveRouterConfig({
      flags: { router: mode, backends: backends.join(","), port: "0", "log-level": "warn" },
    }),
  );
