/**
 * bench:tail's tables (tail-scorecard.ts runs it): per workload a row per `--tail` preset and
 * the default router as the reference, on DeepSeek the throughput preset against its two
 * bounds given by hand, and the `maitred simulate` command of every run the tables read.
 */
import type { TailPreset } from "../../config/tail-preset.ts";
import type { SchedulerCounters } from "../../core/api.ts";
import type { SimulateOptions } from "../../simulate/simulate-options.ts";
import { markdownTable } from "../markdown-table.ts";
import { mean } from "../percentile.ts";
import { span } from "../sim-runs.ts";
import { findRun, fix, meanOf } from "./scorecard.ts";

export const TAIL_WORKLOADS = ["deepseek", "gemini", "claude-code"] as const;
export type TailWorkload = (typeof TAIL_WORKLOADS)[number];

const LABELS: Record<TailWorkload, string> = {
  deepseek: "DeepSeek trace",
  gemini: "Gemini trace",
  "claude-code": "claude-code preset",
};

/** A table row: the plain proxy, tr with a preset, or tr with the throughput bounds by hand. */
export type RowName = "default" | TailPreset | "by-hand";

export interface TailRunSpec {
  workload: TailWorkload;
  seed: number;
  row: RowName;
  /** The run's `maitred simulate` flags, in the order the printed command gives them. */
  flags: [string, string][];
}

export interface TailResult {
  spec: TailRunSpec;
  command: string;
  stepsPerMin: number;
  stepS: { p50: number | null; p95: number | null; p99: number | null };
  /** Longest pause of a step answered in the window. */
  stepPauseMaxS: number;
  /** Longest wait of a request still parked when the window closed (0: none was). */
  stillParkedMaxS: number;
  completionS: { p50: number | null; p99: number | null; count: number; unfinished: number };
  /** Share of prompt tokens served from the prefix cache, 0–1. */
  hit: number | null;
  /** Prompt tokens prefilled again (not from the cache). */
  prefilled: number | null;
  scheduler: SchedulerCounters;
  /** The bounds the core ran with, as its report states them. */
  ageingS: number;
  maxPauseS: number;
  /** Digest of the report but for the settings it echoes: equal digests, equal runs. */
  digest: string;
  wallS: number;
}

/** The throughput preset against its bounds given by hand, for one seed. */
export interface ByHandCheck {
  seed: number;
  ratio: number;
  identical: boolean;
  bounds: [number, number][];
}

export function rowLabel(row: RowName): string {
  if (row === "default") return "default (reference)";
  if (row === "by-hand") return `tr --ageing 0 --max-pause 1800`;
  return `tr --tail ${row}`;
}

const finder =
  (results: readonly TailResult[], workload: TailWorkload) => (seed: number, row: RowName) =>
    findRun(
      results,
      ({ spec: s }) => s.workload === workload && s.seed === seed && s.row === row,
      `${workload} seed ${seed} ${row}`,
    );

function presetTable(
  results: readonly TailResult[],
  workload: TailWorkload,
  seeds: readonly number[],
  rows: readonly RowName[],
): string {
  const find = finder(results, workload);
  const head = [
    "router",
    "ageing / max pause (s)",
    "steps/min",
    `steps/min per seed (${seeds.map((s) => `seed ${s}`).join(" / ")})`,
    "tr ÷ default",
    "step p50 / p95 / p99 (s)",
    "longest wait of one step (s)",
    "program completion p50 / p99 (s)",
    "cache hit %",
    "re-prefilled tokens (M)",
  ];
  const lines = rows.map((row) => {
    const runs = seeds.map((s) => find(s, row));
    const m = (f: (r: TailResult) => number | null, d: number) => fix(meanOf(runs.map(f)), d, "-");
    const ratio = mean(seeds.map((s) => find(s, row).stepsPerMin / find(s, "default").stepsPerMin));
    const bounds =
      row === "default"
        ? "-"
        : [...new Set(runs.map((r) => `${r.ageingS} / ${r.maxPauseS}`))].join(", ");
    return [
      rowLabel(row),
      bounds,
      m((r) => r.stepsPerMin, 1),
      runs.map((r) => r.stepsPerMin.toFixed(1)).join(" / "),
      ratio.toFixed(2),
      (["p50", "p95", "p99"] as const).map((q) => m((r) => r.stepS[q], 1)).join(" / "),
      Math.max(...runs.map((r) => Math.max(r.stepPauseMaxS, r.stillParkedMaxS))).toFixed(0),
      `${m((r) => r.completionS.p50, 0)} / ${m((r) => r.completionS.p99, 0)}`,
      m((r) => (r.hit === null ? null : r.hit * 100), 1),
      m((r) => (r.prefilled === null ? null : r.prefilled / 1e6), 1),
    ];
  });
  return markdownTable(head, lines, 2);
}

/** Per seed, the preset's run against the by-hand one: the same report, the same bounds. */
export function byHandChecks(
  results: readonly TailResult[],
  seeds: readonly number[],
): ByHandCheck[] {
  const find = finder(results, "deepseek");
  return seeds.map((seed) => {
    const preset = find(seed, "throughput");
    const byHand = find(seed, "by-hand");
    return {
      seed,
      ratio: byHand.stepsPerMin / preset.stepsPerMin,
      identical: byHand.digest === preset.digest,
      bounds: [preset, byHand].map((r): [number, number] => [r.ageingS, r.maxPauseS]),
    };
  });
}

function byHandTable(results: readonly TailResult[], checks: readonly ByHandCheck[]): string {
  const find = finder(results, "deepseek");
  const head = [
    "seed",
    "steps/min ratio (by hand ÷ preset)",
    "same report",
    "ageing / max pause (s) preset, by hand",
  ];
  const rows = checks.map((c) => [
    String(c.seed),
    c.ratio.toFixed(4),
    `${c.identical ? "yes" : "no"} (${find(c.seed, "throughput").digest} vs ${find(c.seed, "by-hand").digest})`,
    c.bounds.map(([a, p]) => `${a} / ${p}`).join(", "),
  ]);
  return markdownTable(head, rows, head.slice(2));
}

/**
 * One workload's section: its heading (`o`: the options of one of its runs, for the cluster
 * and the window), the table of presets, on DeepSeek the by-hand check, and the commands.
 */
export function workloadReport(
  results: readonly TailResult[],
  workload: TailWorkload,
  seeds: readonly number[],
  rows: readonly RowName[],
  o: SimulateOptions,
): { text: string; checks: ByHandCheck[] } {
  const find = finder(results, workload);
  const window = `${span(o.warmupMs)} warm-up + ${span(o.durationMs)} window`;
  const out = [
    `\n### ${LABELS[workload]}: ${o.numBackends} × ${o.profile}, ${o.numGpuBlocks} KV blocks per engine, ${o.concurrency[0]} programs, ${window}\n`,
    `Seeds ${seeds.join(", ")}: figures are means over the seeds, but for steps/min per seed and the longest wait (the max over the seeds); tr ÷ default is the mean of each seed's ratio. The bounds are those the core ran with, as its report states them. Longest wait: the longest a step was held paused by the router (a step answered in the window, or a request still parked when it closed). Program completion: first request to release, over the programs completed in the window.\n`,
    presetTable(results, workload, seeds, rows),
  ];
  const deepseek = workload === "deepseek";
  const checks = deepseek ? byHandChecks(results, seeds) : [];
  if (deepseek) {
    out.push(
      "\n`--tail throughput` against `--ageing 0 --max-pause 1800` (the preset sets only these two bounds):\n",
      byHandTable(results, checks),
    );
  }
  out.push("\nThe runs (one line per row and seed):\n", "```sh");
  for (const row of [...rows, ...(deepseek ? ["by-hand" as const] : [])]) {
    for (const seed of seeds) out.push(find(seed, row).command);
  }
  out.push("```");
  return { text: `${out.join("\n")}\n`, checks };
}
