/**
 * bench:simulate's tr variants (simulate-targets.ts runs them): `--sweep`'s placement ×
 * acting-token decay × scheduler interval, the variant lists of `--headroom-steps`,
 * `--ageing` and `--buffers`, `--no-credit`'s run, and their table beside the targets' runs.
 */
import type { Placement } from "../../core/api.ts";
import type { SimRouter, SimRunOptions } from "../../simulate/run-simulation.ts";
import type { SimulateOptions } from "../../simulate/simulate-options.ts";
import type { SimulateRunReport } from "../../simulate/simulate-report.ts";
import { markdownTable } from "../markdown-table.ts";
import { mean } from "../percentile.ts";

/** A run as the scorecard measured it. */
export interface Measured {
  label: string;
  seed: number;
  wallS: number;
  report: SimulateRunReport;
  waits: Waits;
}

/** Parked time of the steps that ended in the steady window (the report's own window). */
export interface Waits {
  pausedSteps: number;
  over10Min: number;
  over20Min: number;
}

/** One router at one concurrency, with what it changes from the target's settings. */
export interface Variant {
  label: string;
  router: SimRouter;
  concurrency: number;
  o?: Partial<Pick<SimulateOptions, "schedulerIntervalMs">>;
  knobs?: Partial<SimulateOptions["knobs"]>;
  shapeSample?: SimRunOptions["shapeSample"];
}

/** What the flags ask beyond the targets. */
export interface VariantFlags {
  sweep: boolean;
  headroomSteps: readonly number[];
  ageingS: readonly number[];
  buffers: readonly number[];
  noCredit: boolean;
}

/** The tr variants the flags ask for, at 128 programs, in the order they run. */
export function trVariants(f: VariantFlags): Variant[] {
  const tr = (label: string, knobs: Variant["knobs"], extra: Partial<Variant> = {}): Variant => ({
    label,
    router: "tr",
    concurrency: 128,
    knobs,
    ...extra,
  });
  const variants: Variant[] = [];
  if (f.sweep) {
    for (const placement of ["best-fit", "worst-fit"] as Placement[]) {
      for (const decay of [false, true]) {
        for (const intervalS of [1, 2, 5]) {
          variants.push(
            tr(
              `${placement}, decay ${decay ? "on" : "off"}, interval ${intervalS} s`,
              { placement, useActingTokenDecay: decay },
              { o: { schedulerIntervalMs: intervalS * 1000 } },
            ),
          );
        }
      }
    }
  }
  for (const n of f.headroomSteps) {
    variants.push(tr(`headroom steps ${n}`, { growthHeadroomSteps: n }));
  }
  for (const a of f.ageingS) variants.push(tr(`ageing ${a} s`, { ageingMs: a * 1000 }));
  for (const b of f.buffers) {
    variants.push(tr(`flat buffer ${b}`, { growthHeadroomSteps: 0, bufferPerProgram: b }));
  }
  if (f.noCredit) {
    // The core's prefix-sharing credit is max(0, materialised tokens − engine KV in use);
    // showing it a full cache (kv usage 1) turns the credit off and nothing else.
    variants.push(tr("no shared credit", {}, { shapeSample: (s) => ({ ...s, kvUsage: 1 }) }));
  }
  return variants;
}

/** Engine preemptions over every backend. */
export const preemptionsOf = (r: SimulateRunReport) =>
  r.backends.reduce((a, b) => a + b.preemptions, 0);

/**
 * A variant's row, the mean over its runs (one per seed): throughput against the target runs'
 * default and oracle at 128 programs (`reference`), and the starvation figures.
 */
export function variantRow(
  label: string,
  runs: readonly Measured[],
  reference: { default: number; oracle: number },
): string[] {
  const sec = (ms: number) => (ms / 1000).toFixed(0);
  const avg = (f: (x: Measured) => number) => mean(runs.map(f));
  const s = avg((x) => x.report.steps_per_min);
  const hit = avg((x) => x.report.prompt_tokens.cache_hit_rate ?? 0);
  const long = avg((x) => x.waits.over10Min / Math.max(1, x.waits.pausedSteps));
  return [
    label,
    s.toFixed(1),
    (s / reference.default).toFixed(2),
    (s / reference.oracle).toFixed(3),
    (hit * 100).toFixed(1),
    avg((x) => preemptionsOf(x.report)).toFixed(0),
    avg((x) => x.report.scheduler.pauses).toFixed(0),
    avg((x) => x.report.scheduler.forcedResumes).toFixed(1),
    sec(avg((x) => x.report.step_latency_ms.p99 ?? 0)),
    sec(avg((x) => x.report.step_latency_ms.max ?? 0)),
    (long * 100).toFixed(1),
  ];
}

/** The variants' table, a row each (`variantRow`). */
export function variantTable(rows: readonly string[][], seeds: readonly number[]): string {
  const head = [
    `tr at C=128 (mean of seeds ${seeds.join(",")})`,
    "steps/min",
    "vs default",
    "vs oracle",
    "cache hit %",
    "engine preemptions",
    "core pauses",
    "forced resumes",
    "step p99 (s)",
    "step max (s)",
    "paused steps > 10 min (%)",
  ];
  return markdownTable(head, rows);
}
