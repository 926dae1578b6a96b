/**
 * What the HAProxy pass of `npm run bench:cells` measured, as plain data: run-cells.ts fills
 * it, the figures and reports read it. Instants are on the driver's clock (ms since the epoch);
 * the driver's records count from `t0`.
 */
import type { RunRecords } from "../records.ts";
import type { Attempt } from "../trace-client.ts";
import type { CpuSample } from "./cells-analysis.ts";
import type { HapEvent, HapRequest } from "./haproxy-log.ts";
import type { LatencyMeasure } from "./latency.ts";
import type { CellsSettings } from "./spec.ts";

export interface CellsRun {
  settings: CellsSettings;
  workloadName: string;
  cpuCount: number;
  /** The load started; the warmup ended; the victim was killed, restarted, ready; the load ended. */
  t0: number;
  stableAt: number;
  killAt: number;
  restartAt: number;
  readyAt: number;
  endAt: number;
  /** How long requests in flight at the end got before they counted as hung. */
  drainMs: number;
  records: RunRecords;
  /** Every request the driver sent through HAProxy. */
  attempts: Attempt[];
  /** CPU at the load's start and each phase's end: warmup, stable, dead, back. */
  samples: CpuSample[];
  /** HAProxy's log, on the driver's clock (shifted by `skewBefore`). */
  hapRequests: HapRequest[];
  hapEvents: HapEvent[];
  /** How far HAProxy's log clock ran ahead of the driver's, before the load and after it. */
  skewBefore: number;
  skewAfter: number;
  latency: LatencyMeasure;
  /** The program ids probed (`cells-p<i>`, every one the run launched and as many again). */
  ids: string[];
  /** HAProxy's hash: each probed id's cell. */
  ring: ReadonlyMap<string, string>;
}
