/**
 * bench:tr's tables (tr-scorecard.ts runs it): per setting a row per measure and a column per
 * seed (and their mean), the ratios read from runs of the same setting, seed and tool-time
 * scale; with several settings, a summary row each, read from the mean over the seeds.
 */
import type { SimRouter } from "../../simulate/run-simulation.ts";
import type { SimulateOptions } from "../../simulate/simulate-options.ts";
import { markdownTable } from "../markdown-table.ts";
import { mean } from "../percentile.ts";
import { span } from "../sim-runs.ts";
import { findRun } from "./scorecard.ts";

/** The tool-time factor the scorecard always reports, whatever `--tool-scales` lists. */
export const SCORECARD_TOOL_SCALE = 50;

export interface TrRunSpec {
  router: SimRouter;
  concurrency: number;
  seed: number;
  toolScale: number;
  workload: string;
  backends: number;
  blocks: string;
  priority: boolean;
  /** `--tail` preset of tr's bounds on waiting; undefined = the default. */
  tail?: string;
  /** Simulated warm-up and window. */
  warmup: string;
  duration: string;
}

export interface TrResult {
  spec: TrRunSpec;
  stepsPerMin: number;
  p99S: number;
  /** Longest pause of a step answered in the window. */
  stepPauseMaxS: number;
  /** Longest wait of a request still parked when the window closed (0: none was). */
  stillParkedMaxS: number;
  hit: number | null;
  wallS: number;
}

export interface TrSetting {
  label: string;
  workload: string;
  backends: number;
  priority: boolean;
  /** Its own warm-up and window, where the default hour holds less than one program's life. */
  warmup?: string;
  duration?: string;
}

/** What the flags ask of every setting. */
export interface TrPlan {
  seeds: number[];
  /** The loaded level, and the second concurrency where one is given. */
  bigC: number;
  smallC: number | undefined;
  /** `--tool-scales`, a row each. */
  sweep: number[];
  /** Every scale but 1 that runs: the sweep's and the scorecard's own × 50. */
  scaled: number[];
}

/** A setting's line in the summary. */
export interface SummaryRow {
  label: string;
  cells: string[];
}

/** A row of figures per seed (several for "a / b / c" cells); the mean is taken per figure. */
interface Row {
  label: string;
  digits: number;
  values(seed: number): number[];
  /** Appended to each cell (e.g. the ratio of a sweep row). */
  suffix?: (seed: number | "mean") => string;
}

/** The runs of one setting, read by router, concurrency, seed and tool-time scale. */
function runsOf(results: readonly TrResult[]) {
  const find = (router: SimRouter, c: number, seed: number, ts = 1): TrResult =>
    findRun(
      results,
      ({ spec: s }) =>
        s.router === router && s.concurrency === c && s.seed === seed && s.toolScale === ts,
      `${router} C=${c} seed ${seed} tool×${ts}`,
    );
  const ratio = (c: number, seed: number, ts = 1, over: SimRouter = "default") =>
    find("tr", c, seed, ts).stepsPerMin / find(over, c, seed, ts).stepsPerMin;
  return { find, ratio };
}

function rowsOf(results: readonly TrResult[], p: TrPlan): Row[] {
  const { find, ratio } = runsOf(results);
  const { bigC, smallC } = p;
  const three = (seed: number) => [
    find("tr", bigC, seed),
    find("default", bigC, seed),
    find("oracle", bigC, seed),
  ];
  const rows: Row[] = [
    {
      label: `tr ÷ default steps/min, ${bigC} programs`,
      digits: 2,
      values: (s) => [ratio(bigC, s)],
    },
    {
      label: `tr ÷ oracle steps/min, ${bigC} programs`,
      digits: 2,
      values: (s) => [ratio(bigC, s, 1, "oracle")],
    },
    {
      label: `steps/min tr / default / oracle, ${bigC} programs`,
      digits: 1,
      values: (s) => three(s).map((r) => r.stepsPerMin),
    },
    {
      label: `step latency p99 (s) tr / default / oracle, ${bigC} programs`,
      digits: 0,
      values: (s) => three(s).map((r) => r.p99S),
    },
    {
      label: `tr longest pause of one step (s), ${bigC} programs`,
      digits: 0,
      values: (s) => [longestPause(find("tr", bigC, s))],
    },
  ];
  if (smallC !== undefined) {
    rows.push({
      label: `tr ÷ default steps/min, ${smallC} programs`,
      digits: 3,
      values: (s) => [ratio(smallC, s)],
    });
  }
  rows.push({
    label: `tr ÷ default steps/min, tool time × ${SCORECARD_TOOL_SCALE}`,
    digits: 2,
    values: (s) => [ratio(bigC, s, SCORECARD_TOOL_SCALE)],
  });
  for (const ts of p.sweep) {
    rows.push({
      label: `tool time × ${ts}: steps/min tr / default (tr ÷ default)`,
      digits: 1,
      values: (s) => [
        find("tr", bigC, s, ts).stepsPerMin,
        find("default", bigC, s, ts).stepsPerMin,
      ],
      suffix: (s) => {
        const r = s === "mean" ? mean(p.seeds.map((x) => ratio(bigC, x, ts))) : ratio(bigC, s, ts);
        return ` (${r.toFixed(2)})`;
      },
    });
  }
  return rows;
}

/** The longest time tr held one step paused: answered in the window, or still parked at its end. */
const longestPause = (r: TrResult) => Math.max(r.stepPauseMaxS, r.stillParkedMaxS);

/**
 * One setting's heading and table (`o`: its first run's options, for the cluster and window),
 * and its line in the summary.
 */
export function settingReport(
  st: TrSetting,
  o: SimulateOptions,
  results: readonly TrResult[],
  p: TrPlan,
): { text: string; summary: SummaryRow } {
  const { seeds, bigC, smallC } = p;
  const { find, ratio } = runsOf(results);
  const rows = rowsOf(results, p);
  const cols = seeds.map((s) => `seed ${s}`);
  if (seeds.length > 1) cols.push("mean");
  const cell = (row: Row, seed: number | "mean") => {
    const v =
      seed === "mean"
        ? row.values(seeds[0]).map((_, k) => mean(seeds.map((s) => row.values(s)[k])))
        : row.values(seed);
    return v.map((x) => x.toFixed(row.digits)).join(" / ") + (row.suffix?.(seed) ?? "");
  };
  const window = `${span(o.warmupMs)} warm-up + ${span(o.durationMs)} window`;
  const heading = `### ${st.label}: ${st.backends} × ${o.profile}, ${o.numGpuBlocks ?? "the profile's"} KV blocks per engine, ${window}${st.priority ? ", priorities on for tr" : ""}`;
  const table = markdownTable(
    ["measure", ...cols],
    rows.map((row) => [
      row.label,
      ...seeds.map((s) => cell(row, s)),
      ...(seeds.length > 1 ? [cell(row, "mean")] : []),
    ]),
  );
  // The summary reads the mean over seeds (the one seed's figure with one seed).
  const m = (f: (seed: number) => number, d: number) => mean(seeds.map(f)).toFixed(d);
  const summary = {
    label: `${st.label} (${window})`,
    cells: [
      m((s) => ratio(bigC, s), 2),
      m((s) => ratio(bigC, s, 1, "oracle"), 2),
      m((s) => find("tr", bigC, s).p99S, 0),
      m((s) => longestPause(find("tr", bigC, s)), 0),
      ...(smallC === undefined ? [] : [m((s) => ratio(smallC, s), 3)]),
      ...p.scaled.map((ts) => m((s) => ratio(bigC, s, ts), 2)),
    ],
  };
  return { text: `\n${heading}\n\n${table}\n`, summary };
}

/** The settings side by side, under their heading. */
export function summaryReport(summary: readonly SummaryRow[], p: TrPlan): string {
  const { seeds, bigC, smallC } = p;
  const head = [
    "setting",
    `tr ÷ default, ${bigC}`,
    "tr ÷ oracle",
    "tr p99 (s)",
    "tr longest pause (s)",
    ...(smallC === undefined ? [] : [`tr ÷ default, ${smallC}`]),
    ...p.scaled.map((ts) => `tool × ${ts}`),
  ];
  const over = seeds.length > 1 ? `mean of seeds ${seeds.join(", ")}` : `seed ${seeds[0]}`;
  const table = markdownTable(
    head,
    summary.map((s) => [s.label, ...s.cells]),
  );
  return `\n### Summary (${over}; ratios are steps/min at ${bigC} programs unless stated)\n\n${table}\n`;
}
