import type { RunRecords } from "../bench/records.ts";
import type { ShadowSummary } from "../shadow/shadow.ts";
import type { Workload } from "../workload/types.ts";
import { runSimulation, type SimRouter, type SimRunOptions } from "./run-simulation.ts";
import type { SimulateOptions } from "./simulate-options.ts";
import type { SimulateRunReport, SimulateShadow } from "./simulate-report.ts";

/**
 * Every (concurrency, router) pair of a `maitred simulate` invocation, one fresh cluster
 * each, concurrency-major so that the routers of one concurrency sit side by side in the
 * table. Runs are sequential and independent of the wall clock; `onRun` may time them.
 */

export interface SweepHooks {
  onRunStart?(router: SimRouter, concurrency: number): void;
  onRunEnd?(report: SimulateRunReport, records: RunRecords): void;
}

/** One run of a `maitred simulate` invocation: its router and concurrency, the rest shared. */
export function simRunOptions(
  o: SimulateOptions,
  router: SimRouter,
  concurrency: number,
  workload: Workload,
): SimRunOptions {
  return {
    router,
    concurrency,
    workload,
    numBackends: o.numBackends,
    profile: o.profile,
    numGpuBlocks: o.numGpuBlocks,
    kvOffloadingSize: o.kvOffloadingSize,
    ...(o.priorityScheduling === undefined ? {} : { priorityScheduling: o.priorityScheduling }),
    warmupMs: o.warmupMs,
    durationMs: o.durationMs,
    maxPrograms: o.maxPrograms,
    schedulerIntervalMs: o.schedulerIntervalMs,
    knobs: o.knobs,
    engineSeed: o.seed,
    // A tr shadow watches the plain router's runs (serve --shadow).
    ...(o.shadow && router === "default" ? { shadow: {} } : {}),
  };
}

export function simulateSweep(
  o: SimulateOptions,
  workload: Workload,
  hooks: SweepHooks = {},
): SimulateRunReport[] {
  const reports: SimulateRunReport[] = [];
  for (const concurrency of o.concurrency) {
    for (const router of o.routers) {
      hooks.onRunStart?.(router, concurrency);
      const run = runSimulation(simRunOptions(o, router, concurrency, workload));
      const report: SimulateRunReport =
        run.shadow === undefined ? run.report : { ...run.report, shadow: shadowReport(run.shadow) };
      hooks.onRunEnd?.(report, run.records);
      reports.push(report);
    }
  }
  return reports;
}

/** The shadow's summary as the report keeps it: its latest decisions left out. */
function shadowReport(s: ShadowSummary): SimulateShadow {
  const { recent: _recent, ...rest } = s;
  return rest;
}
